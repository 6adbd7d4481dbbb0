package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/strictjson"
)

// MaxJSONBody caps the body of every JSON request except uploads, which have
// their own limit.
const MaxJSONBody = 64 << 10

// DecodeRequest reads r's JSON body with ReadJSON into v with
// strictjson.Unmarshal.
// It returns the problem to answer with when that fails.
func DecodeRequest(w http.ResponseWriter, r *http.Request, v any) *problem.Problem {
	data, p := ReadJSON(w, r)
	if p != nil {
		return p
	}
	if err := strictjson.Unmarshal(data, v); err != nil {
		if isEnvelope(data) {
			return ErrPlainEnvelope
		}
		return DecodeProblem(err)
	}
	return nil
}

// ErrPlainEnvelope answers a JWE sent without the opt-in, which the edge
// therefore passed on as it was.
var ErrPlainEnvelope = BadRequest("the body is a JWE envelope, but the request has no X-Encryption: JWE header, " +
	"so it was not decrypted: send the envelope with X-Encryption: JWE")

// isEnvelope reports whether a body that is not the expected JSON is a JWE
// in the JSON serialization: an object with ciphertext and tag members.
func isEnvelope(data []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return false
	}
	_, ct := m["ciphertext"]
	_, tag := m["tag"]
	return ct && tag
}

// ReadJSON returns r's JSON body, at most MaxJSONBody bytes, or the problem
// to answer with: 415 for another media type, 413 for a body too large.
func ReadJSON(w http.ResponseWriter, r *http.Request) ([]byte, *problem.Problem) {
	return ReadJSONUpTo(w, r, MaxJSONBody)
}

// ReadJSONUpTo is ReadJSON for a route of its own limit, of at most limit
// bytes.
func ReadJSONUpTo(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *problem.Problem) {
	if p := requireJSON(r); p != nil {
		return nil, p
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, TooLarge(fmt.Sprintf("JSON bodies are limited to %d bytes", limit))
	case err != nil:
		return nil, BadRequest("the body could not be read")
	}
	return data, nil
}

// DecodeProblem is the 400 problem for an error of strictjson.Unmarshal,
// or of validation after it: invalid_json when the text is not JSON of the
// right types, invalid_request otherwise.
func DecodeProblem(err error) *problem.Problem {
	if errors.Is(err, strictjson.ErrSyntax) {
		return problem.New(http.StatusBadRequest, problem.CodeInvalidJSON, err.Error())
	}
	return BadRequest(err.Error())
}

// requireJSON returns a 415 problem unless r's Content-Type is
// application/json (parameters such as charset=utf-8 are allowed).
func requireJSON(r *http.Request) *problem.Problem {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err == nil && mt == "application/json" {
		return nil
	}
	return UnsupportedMedia(mt, "application/json")
}

// UnsupportedMedia is the 415 answer to a body of media type mt where want
// was expected. A JWE's media type is told the opt-in it lacks: without
// X-Encryption: JWE the edge passes the body on as it is.
func UnsupportedMedia(mt, want string) *problem.Problem {
	if mt == "application/jose" || mt == "application/jose+json" {
		return problem.New(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMedia,
			"the body is a JWE ("+mt+"), but the request has no X-Encryption: JWE header, so it was not decrypted: "+
				"send it with X-Encryption: JWE")
	}
	return problem.New(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMedia, "Content-Type must be "+want)
}
