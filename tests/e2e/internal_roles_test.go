package e2e

import (
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestInternalListenerRoles (second review, finding 2): through the real
// binaries, each route of the backend's internal listener serves the
// certificate of its role alone and refuses every other (403), none (403),
// plain HTTP and another authority's certificate (at the handshake); the
// health routes serve anyone over TLS. A stranger can no longer publish
// an event into a tenant's workspace or post parser results into its
// record, nor read a client's key from the key plane, nor report as an
// edge.
func TestInternalListenerRoles(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	c := s.NewClient("internal-roles")
	record := s.Upload(c, s.Login(c, false, ""), false, []byte("a consultation"), "")
	routes := []struct {
		method, path, body string
		role               pki.Role // "" for anyone
	}{
		{"GET", "/.well-known/jwks.json", "", pki.Edge},
		{"GET", "/internal/v1/keys/" + url.PathEscape(c.Kid), "", pki.Edge}, // the client's key, its secret in the clear
		{"GET", "/internal/v1/key-changes?after=0", "", pki.Edge},
		{"POST", "/internal/v1/edge-reports", `{"instance":"0f8fad5b-d9cb-469f-a165-70867728950e","applied_seq":0,"uses":[]}`, pki.Edge},
		{"POST", "/internal/v1/events", `{"workspace_id":"` + c.Workspace + `","type":"appointment.created","data":{"appointment_id":"a-1"}}`, pki.Publisher},
		{"POST", "/internal/v1/records/" + url.PathEscape(record) + "/resources", hdctest.ParserResults, pki.Parser},
		{"GET", "/metrics", "", pki.Scraper},
		{"GET", "/healthz", "", ""},
		{"GET", "/readyz", "", ""},
	}
	other := filepath.Join(t.TempDir(), "other")
	s.HDC(nil, "tls", "init", "--dir", other)
	for _, rt := range routes {
		for _, role := range []pki.Role{"", pki.Edge, pki.Publisher, pki.Parser, pki.Scraper} {
			name := string(role)
			if role == "" {
				name = "no certificate"
			}
			t.Run(rt.path+" as "+name, func(t *testing.T) {
				status, body := s.InternalCall(s.InternalClient(role), rt.method, s.Internal+rt.path, rt.body)
				if rt.role == "" || rt.role == role {
					if status >= 300 {
						t.Fatalf("refused: %d %s", status, body)
					}
					return
				}
				testkit.WantProblem(t, status, http.Header{"Content-Type": {problem.ContentType}}, body, http.StatusForbidden, "forbidden")
			})
		}
		t.Run(rt.path+" over plain HTTP", func(t *testing.T) {
			if status, body := s.InternalCall(http.DefaultClient, rt.method, strings.Replace(s.Internal, "https:", "http:", 1)+rt.path, rt.body); status < 400 {
				t.Fatalf("served: %d %s", status, body)
			}
		})
		t.Run(rt.path+" as another authority's "+string(pki.Edge), func(t *testing.T) {
			if resp, err := hdctest.HopClient(t, other, pki.Edge).Get(s.Internal + rt.path); err == nil {
				resp.Body.Close()
				t.Fatalf("the handshake passed: %d", resp.StatusCode)
			}
		})
	}
	if out := s.Output("hdc-backend"); !strings.Contains(out, "no client certificate of the role the route needs") {
		t.Error("the backend did not log the refusals")
	}
}
