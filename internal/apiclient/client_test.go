package apiclient

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
)

// TestSendTrustsOnlySealedSuccesses: with encryption asked for, a 2xx
// answer must be an envelope under the client's key; error answers pass,
// marked when they are not sealed. Without it, answers pass as they are.
func TestSendTrustsOnlySealedSuccesses(t *testing.T) {
	key, err := jwe.NewKey("unit-test-key-16")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		encrypt    bool
		status     int
		sealed     bool
		redirect   bool
		wantErr    string
		wantMarked bool
		compact    bool
	}{
		{"sealed success", true, 200, true, false, "", false, false},
		{"sealed compact success", true, 200, true, false, "", false, true},
		{"plain success", true, 200, false, false, "not encrypted under key k1", false, false},
		{"plain error", true, 404, false, false, "", true, false},
		{"sealed error", true, 404, true, false, "", false, false},
		{"a redirect is the answer", true, 302, false, true, "", true, false},
		{"plain success without encryption", false, 200, false, false, "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body := []byte(`{"ok":true}`)
				if tt.sealed {
					w.Header().Set(contract.HeaderEncryption, contract.EncryptionJWE)
					body = jwe.EncryptResponse(key, "k1", body)
					if tt.compact {
						w.Header().Set("Content-Type", "application/jose")
						body = jwe.EncryptCompact(key, jwe.Protected{Kid: "k1"}, []byte(`{"ok":true}`))
					}
				}
				if tt.redirect {
					w.Header().Set("Location", "/elsewhere")
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write(body)
			}))
			defer srv.Close()
			c, err := New(Credentials{BaseURL: srv.URL, ClientID: "c", ClientSecret: "s", Kid: "k1",
				EncryptionKey: "unit-test-key-16"}, "", tt.encrypt)
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.send(http.MethodGet, "/x", nil, nil, nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tt.status || string(r.Body) != `{"ok":true}` || (c.Unauthenticated(r) != "") != tt.wantMarked {
				t.Fatalf("answer %d %s, marked %q", r.Status, r.Body, c.Unauthenticated(r))
			}
		})
	}
}
