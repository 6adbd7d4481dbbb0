package testkit

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/problem"
)

// WantProblem fails t unless an answer with header and body is an RFC 9457
// problem with status and code (and, for a 401, a Bearer challenge, as
// RFC 6750 asks), and returns it.
func WantProblem(t testing.TB, gotStatus int, header http.Header, body []byte, status int, code string) problem.Problem {
	t.Helper()
	var p problem.Problem
	if gotStatus != status || header.Get("Content-Type") != problem.ContentType {
		t.Fatalf("got %d %s %.300s; want %d problem %q", gotStatus, header.Get("Content-Type"), body, status, code)
	}
	if err := json.Unmarshal(body, &p); err != nil || p.Code != code || p.Status != status || p.Type != problem.TypeBase+code {
		t.Fatalf("got problem %.300s; want %d %q", body, status, code)
	}
	if status == http.StatusUnauthorized && !strings.HasPrefix(header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("401 without WWW-Authenticate: Bearer")
	}
	return p
}
