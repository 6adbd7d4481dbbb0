// Package problem writes RFC 9457 problem details. The edge and the backend
// answer every error with one of these: a stable machine code, a status, and a
// detail that never carries secrets, tokens or request plaintext.
package problem

import (
	"encoding/json"
	"errors"
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
func Write(w http.ResponseWriter, p *Problem) { write(w, p.Status, p.Body()) }

// WriteExtended sends p with extension members (RFC 9457 §3.2): the
// members of ext, whose JSON must be an object, after p's own, whose
// names it must not repeat. It writes nothing when ext is not an object.
func WriteExtended(w http.ResponseWriter, p *Problem, ext any) error {
	members, err := json.Marshal(ext)
	if err != nil {
		return err
	}
	if len(members) < 2 || members[0] != '{' {
		return errors.New("problem: extension members must be a JSON object")
	}
	body := p.Body()
	if len(members) > 2 {
		body = append(append(body[:len(body)-1], ','), members[1:]...)
	}
	write(w, p.Status, body)
	return nil
}

// write sends body, a problem of status, with the headers of every
// problem.
func write(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if status == http.StatusUnauthorized && h.Get("WWW-Authenticate") == "" {
		h.Set("WWW-Authenticate", "Bearer")
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
