// Package web holds the HTTP plumbing the backend's handlers share: the
// caller identity the edge forwards, strict JSON request decoding, JSON
// answers, and a router that answers unknown routes and wrong methods with
// problem details.
package web

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/health-data-connect/hdc/internal/problem"
)

// WriteJSON answers with status and v encoded as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		problem.Write(w, Internal())
		return
	}
	WriteJSONBytes(w, status, body)
}

// WriteJSONBytes answers with status and body, a JSON text. The answer is
// not cached (Cache-Control: no-store) unless the handler set another
// Cache-Control.
func WriteJSONBytes(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-store")
	}
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Internal is the problem for a failure that is the server's fault. Its
// detail says nothing about the cause, which goes to the log instead.
func Internal() *problem.Problem {
	return problem.New(http.StatusInternalServerError, problem.CodeInternalError, "the server failed to handle the request")
}

// NotFound is the problem for a missing resource; it never says whether the
// resource exists somewhere the caller may not see.
func NotFound() *problem.Problem {
	return problem.New(http.StatusNotFound, problem.CodeNotFound, "no such resource")
}

// BadRequest is the problem for a request the client must correct.
func BadRequest(detail string) *problem.Problem {
	return problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, detail)
}

// TooLarge is the problem for a body over its limit.
func TooLarge(detail string) *problem.Problem {
	return problem.New(http.StatusRequestEntityTooLarge, problem.CodePayloadTooLarge, detail)
}
