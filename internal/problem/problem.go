// Package problem writes RFC 9457 problem details. The edge and the backend
// answer every error with one of these: a stable machine code, a status, and a
// detail that never carries secrets, tokens or request plaintext.
package problem

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// ContentType is the media type of a problem details body.
const ContentType = "application/problem+json"

// TypeBase prefixes every problem type URI; the code follows it. A tag URI
// (RFC 4151) names the type without pretending to be a resolvable address;
// docs/errors.md lists every code.
const TypeBase = "tag:health-data-connect,2026:problem:"

// Problem is an RFC 9457 problem details object with a stable machine code.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	Code   string `json:"code"`
}

// New returns the problem for status with the given code and detail.
// The title is the status text, so it is the same for every occurrence of a code.
func New(status int, code, detail string) *Problem {
	return &Problem{
		Type:   TypeBase + code,
		Title:  http.StatusText(status),
		Status: status,
		Detail: detail,
		Code:   code,
	}
}

// Error implements error so a Problem can travel as one.
func (p *Problem) Error() string {
	if p.Detail == "" {
		return p.Code
	}
	return p.Code + ": " + p.Detail
}

// Body returns the JSON encoding of p.
func (p *Problem) Body() []byte {
	b, err := json.Marshal(p)
	if err != nil { // cannot happen: every field is a string or an int
		panic(err)
	}
	return b
}

// Write sends p as the response. A 401 carries WWW-Authenticate: Bearer as
// RFC 6750 asks; the caller may have set a more precise one before.
func Write(w http.ResponseWriter, p *Problem) {
	body := p.Body()
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if p.Status == http.StatusUnauthorized && h.Get("WWW-Authenticate") == "" {
		h.Set("WWW-Authenticate", "Bearer")
	}
	w.WriteHeader(p.Status)
	_, _ = w.Write(body)
}
