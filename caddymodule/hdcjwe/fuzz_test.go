package hdcjwe

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/caddymodule/edge/edgetest"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
)

// FuzzJWE drives the handler's request path with arbitrary bodies, in
// both forms and both binding modes. Whatever comes in, the answer is a 200
// from the upstream or a 4xx problem that never reached it; never a 5xx.
// A problem decided once the key is established (a login body that names
// no client, say) is encrypted under that key.
func FuzzJWE(f *testing.F) {
	k := edgetest.Key(f, edgetest.SecretOf("k-c1"))
	f.Add(jwe.EncryptRequest(k, jwe.Protected{Kid: "k-c1"}, []byte(`{"a":1}`)), false, false)
	f.Add(jwe.EncryptCompact(k, jwe.Protected{Kid: "k-c1"}, []byte(`{"a":1}`)), true, false)
	f.Add(jwe.EncryptRequest(k, jwe.Protected{Kid: "k-c1"}, []byte(`{"client_id":"c1"}`)), false, true)
	f.Add(jwe.EncryptRequest(edgetest.Key(f, edgetest.SecretOf("k-c2")), jwe.Protected{Kid: "k-c2"}, []byte(`{"client_id":"c2"}`)), false, true)
	f.Add([]byte(`{"protected":"eyJhbGciOiJkaXIiLCJlbmMiOiJBMTI4Q0JDLUhTMjU2In0","iv":"","ciphertext":"","tag":"","kid":"k-c1"}`), false, false)
	token := newTestJWE(f, false)
	login := newTestJWE(f, true)
	login.app = token.app
	f.Fuzz(func(t *testing.T, body []byte, compact, loginMode bool) {
		h := token
		if loginMode {
			h = login
		}
		ctype := "application/json"
		if compact {
			ctype = "application/jose"
		}
		up := &upstream{reply: []byte(`{}`)}
		w := serve(t, h, encryptedRequest("POST", "/x", body, ctype), "c1", up)
		switch {
		case w.Code == http.StatusOK:
			if !up.called {
				t.Fatal("200 without the upstream")
			}
			openResponse(t, w, edgetest.SecretOf(up.header.Get(contract.HeaderKeyID)))
		case w.Code >= 400 && w.Code < 500:
			if up.called {
				t.Fatalf("%d after reaching the upstream", w.Code)
			}
			checkRefusal(t, w)
		default:
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
	})
}

// checkRefusal holds a 4xx answer to being a problem of its status: plain,
// or encrypted under the key its envelope names.
func checkRefusal(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	body := w.Body.Bytes()
	if w.Header().Get(contract.HeaderEncryption) == contract.EncryptionJWE {
		e, _ := edgetest.ParseAnswer(t, w.Header(), body)
		body = openResponse(t, w, edgetest.SecretOf(e.Header.Kid))
	} else if !strings.HasPrefix(w.Header().Get("Content-Type"), "application/problem+json") {
		t.Fatalf("%d without a problem: %s", w.Code, body)
	}
	var p struct {
		Status int    `json:"status"`
		Code   string `json:"code"`
	}
	if err := json.Unmarshal(body, &p); err != nil || p.Status != w.Code || p.Code == "" {
		t.Fatalf("%d answered %s (%v)", w.Code, body, err)
	}
}
