package e2e

import (
	"bytes"
	"testing"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestFreshRequests runs freshRequests on one stack (SQLite, one edge),
// its edge serving the reference Caddyfile's site over plain HTTP and over
// TLS (HTTP/2 from Go's client).
func TestFreshRequests(t *testing.T) {
	t.Parallel()
	for _, site := range []struct {
		name  string
		start func(*testing.T) *hdctest.Stack
	}{{"http", func(t *testing.T) *hdctest.Stack { return hdctest.StartStack(t) }}, {"https", hdctest.StartTLSStack}} {
		t.Run(site.name, func(t *testing.T) {
			s := site.start(t)
			hdctest.FreshRequests(t, s, s, s)
		})
	}
}

// TestCallSendsFreshRequests: hdc call names iat and a new jti in every
// envelope, so that it works with an A256GCM key (whose envelopes must
// name them) for a plain request and for an upload read from a file, and
// with an A128CBC-HS256 key made with --require-fresh.
func TestCallSendsFreshRequests(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	file, _ := randomFile(t, t.TempDir(), "consultation.bin", 200<<10)
	for _, tt := range []struct {
		name string
		c    *hdctest.APIClient
		enc  string
	}{
		{"A256GCM", s.NewClientEnc("call-gcm", hdctest.EncGCM), hdctest.EncGCM},
		{"A128CBC-HS256 --require-fresh", s.NewClientEnc("call-strict", "", "--require-fresh"), "A128CBC-HS256"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			endpoint := "https://hooks.example.org/" + tt.c.ID
			s.HDCCall(tt.c, "--encrypt", "--enc", tt.enc, "POST", hdctest.SubsPath, "--data", `{"endpoint":"`+endpoint+`","event_names":["user.delete"]}`)
			if out, _ := s.HDCCall(tt.c, "--encrypt", "--enc", tt.enc, "GET", hdctest.SubsPath); !bytes.Contains(out, []byte(endpoint)) {
				t.Fatalf("the list lacks the registration: %s", out)
			}
			if out, _ := s.HDCCall(tt.c, "--encrypt", "--enc", tt.enc, "POST", hdctest.UploadPath, "--file", file); !bytes.Contains(out, []byte("care_context_id")) {
				t.Fatalf("upload: %s", out)
			}
		})
	}
}
