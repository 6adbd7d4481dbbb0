package edge

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/caddymodule/spool"
	"github.com/health-data-connect/hdc/internal/problem"
)

// TestReadProblem checks the answer to each way a body may fail to be
// read into a spool, wrapped as a reader may wrap it.
func TestReadProblem(t *testing.T) {
	_, spoolErr := spool.New(1, "/nonexistent-dir-for-hdc-test", 0).Write([]byte("xx"))
	w := httptest.NewRecorder()
	_, limitErr := io.ReadAll(http.MaxBytesReader(w, io.NopCloser(strings.NewReader("12345")), 4))
	for _, tc := range []struct {
		name string
		err  error
		want string // the problem's code, "" for none
	}{
		{"none", nil, ""},
		{"past the quota", fmt.Errorf("reading: %w", ErrQuotaPassed), problem.CodeQuotaExceeded},
		{"the spool failed", spoolErr, problem.CodeInternalError},
		{"past request_body's limit", limitErr, problem.CodePayloadTooLarge},
		{"the client went away", io.ErrUnexpectedEOF, problem.CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ReadProblem(tc.err)
			switch {
			case tc.want == "" && p != nil:
				t.Fatalf("ReadProblem(nil) = %v", p)
			case tc.want != "" && (p == nil || p.Code != tc.want):
				t.Fatalf("ReadProblem(%v) = %v, want %s", tc.err, p, tc.want)
			}
		})
	}
	if !errors.As(spoolErr, new(*spool.Error)) || ReadProblem(spoolErr) != errSpool {
		t.Errorf("a spool failure (%v) is not errSpool", spoolErr)
	}
	if p := ReadProblem(limitErr); !strings.Contains(p.Detail, "4B") {
		t.Errorf("a body past request_body's limit is not told the limit: %q", p.Detail)
	}
}
