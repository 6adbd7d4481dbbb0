package web

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

type login struct {
	ClientID string `json:"client_id"`
}

func TestDecodeRequest(t *testing.T) {
	tests := []struct {
		name     string
		ct, body string
		status   int
		code     string
		detail   string // a part of the problem's detail, when given
	}{
		{"JSON", "application/json", `{"client_id":"a"}`, 0, "", ""},
		{"JSON with charset", "application/json; charset=utf-8", `{"client_id":"a"}`, 0, "", ""},
		{"text content type", "text/plain", `{"client_id":"a"}`, 415, "unsupported_media_type", ""},
		{"no content type", "", `{"client_id":"a"}`, 415, "unsupported_media_type", ""},
		{"body too large", "application/json", `{"client_id":"` + strings.Repeat("a", MaxJSONBody) + `"}`, 413, "payload_too_large", ""},
		{"unknown member", "application/json", `{"x":1}`, 400, "invalid_request", "unknown member"},
		{"truncated JSON", "application/json", `{"client_id":`, 400, "invalid_json", ""},
		{"envelope without the opt-in", "application/json", `{"protected":"e30","iv":"AA","ciphertext":"AA","tag":"AA","kid":"k"}`, 400, "invalid_request", "X-Encryption: JWE"},
		{"compact without the opt-in", "application/jose", `e30..AA.AA.AA`, 415, "unsupported_media_type", "X-Encryption: JWE"},
		{"jose+json without the opt-in", "application/jose+json", `{}`, 415, "unsupported_media_type", "X-Encryption: JWE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", strings.NewReader(tt.body))
			r.Header.Set("Content-Type", tt.ct)
			var v login
			p := DecodeRequest(httptest.NewRecorder(), r, &v)
			switch {
			case tt.status == 0 && p != nil:
				t.Errorf("%s %.20q: %v", tt.ct, tt.body, p)
			case tt.status != 0 && (p == nil || p.Status != tt.status || p.Code != tt.code):
				t.Errorf("%s %.20q: problem %+v, want %d %s", tt.ct, tt.body, p, tt.status, tt.code)
			case p != nil && !strings.Contains(p.Detail, tt.detail):
				t.Errorf("%s %.20q: detail %q, want it to say %q", tt.ct, tt.body, p.Detail, tt.detail)
			}
		})
	}
}

func TestMux(t *testing.T) {
	m := NewMux()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Method+" "+r.PathValue("id")) })
	m.Handle("GET", "/things", ok)
	m.Handle("POST", "/things", ok)
	m.Handle("DELETE", "/things/{id}", ok)
	tests := []struct {
		name         string
		method, path string
		status       int
		allow, body  string
	}{
		{"get collection", "GET", "/things", 200, "", "GET "},
		{"post collection", "POST", "/things", 200, "", "POST "},
		{"delete item", "DELETE", "/things/7", 200, "", "DELETE 7"},
		{"method not allowed on collection", "PUT", "/things", 405, "GET, POST, HEAD", ""},
		{"method not allowed on item", "GET", "/things/7", 405, "DELETE", ""},
		{"unknown path", "GET", "/nothing", 404, "", ""},
		{"path below item", "GET", "/things/7/more", 404, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			m.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
			if rec.Code != tt.status || rec.Header().Get("Allow") != tt.allow {
				t.Errorf("%s %s = %d Allow %q; want %d %q", tt.method, tt.path, rec.Code, rec.Header().Get("Allow"), tt.status, tt.allow)
			}
			if tt.body != "" && rec.Body.String() != tt.body {
				t.Errorf("%s %s body = %q", tt.method, tt.path, rec.Body)
			}
			if tt.status >= 400 {
				var p problem.Problem
				if rec.Header().Get("Content-Type") != problem.ContentType || json.Unmarshal(rec.Body.Bytes(), &p) != nil || p.Status != tt.status {
					t.Errorf("%s %s: not a problem answer: %s", tt.method, tt.path, rec.Body)
				}
			}
		})
	}
}

func TestRequireCaller(t *testing.T) {
	// handler is built for each subtest, so that it fails the subtest.
	handler := func(t *testing.T) http.Handler {
		return RequireCaller(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, ok := CallerFrom(r.Context())
			if !ok {
				t.Fatal("no caller in context")
			}
			io.WriteString(w, c.ClientID+"|"+c.WorkspaceID+"|"+c.GrantID)
		}))
	}
	tests := []struct {
		name    string
		headers [][2]string
		status  int
		body    string
	}{
		{"complete", [][2]string{{contract.HeaderClientID, "c1"}, {contract.HeaderWorkspaceID, "w1"}, {contract.HeaderTokenID, "t1"}}, 200, "c1|w1|"},
		{"no token id", [][2]string{{contract.HeaderClientID, "c1"}, {contract.HeaderWorkspaceID, "w1"}}, 200, "c1|w1|"},
		{"a grant", [][2]string{{contract.HeaderClientID, "c1"}, {contract.HeaderWorkspaceID, "w2"}, {contract.HeaderGrantID, "g1"}}, 200, "c1|w2|g1"},
		{"two grants", [][2]string{{contract.HeaderClientID, "c1"}, {contract.HeaderWorkspaceID, "w2"}, {contract.HeaderGrantID, "g1"}, {contract.HeaderGrantID, "g2"}}, 401, ""},
		{"bad grant", [][2]string{{contract.HeaderClientID, "c1"}, {contract.HeaderWorkspaceID, "w2"}, {contract.HeaderGrantID, "g 1"}}, 401, ""},
		{"no workspace", [][2]string{{contract.HeaderClientID, "c1"}}, 401, ""},
		{"no client", [][2]string{{contract.HeaderWorkspaceID, "w1"}}, 401, ""},
		{"empty client", [][2]string{{contract.HeaderClientID, ""}, {contract.HeaderWorkspaceID, "w1"}}, 401, ""},
		{"two clients", [][2]string{{contract.HeaderClientID, "c1"}, {contract.HeaderClientID, "c2"}, {contract.HeaderWorkspaceID, "w1"}}, 401, ""},
		{"bad workspace", [][2]string{{contract.HeaderClientID, "c1"}, {contract.HeaderWorkspaceID, "w 1"}}, 401, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := handler(t)
			r := httptest.NewRequest("GET", "/", nil)
			for _, kv := range tt.headers {
				r.Header.Add(kv[0], kv[1])
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code != tt.status || (tt.body != "" && rec.Body.String() != tt.body) {
				t.Errorf("%s: %d %q", tt.name, rec.Code, rec.Body)
			}
			if tt.status == 401 && rec.Header().Get("WWW-Authenticate") != "Bearer" {
				t.Errorf("%s: WWW-Authenticate = %q", tt.name, rec.Header().Get("WWW-Authenticate"))
			}
		})
	}
}

func TestWriteJSONBytes(t *testing.T) {
	for _, tt := range []struct{ name, set, want string }{
		{"default cache control", "", "no-store"},
		{"cache control kept", "max-age=60", "max-age=60"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			if tt.set != "" {
				w.Header().Set("Cache-Control", tt.set)
			}
			WriteJSONBytes(w, http.StatusCreated, []byte(`{"a":1}`))
			h := w.Result().Header
			if w.Code != http.StatusCreated || w.Body.String() != `{"a":1}` || h.Get("Content-Type") != "application/json" ||
				h.Get("Content-Length") != "7" || h.Get("Cache-Control") != tt.want || h.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("Cache-Control %q set: %d %v %q", tt.set, w.Code, h, w.Body)
			}
		})
	}
}
