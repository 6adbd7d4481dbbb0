package web

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

type login struct {
	ClientID string   `json:"client_id"`
	Secret   string   `json:"client_secret"`
	Names    []string `json:"names,omitempty"`
	Ignored  string   `json:"-"`
	Plain    int
}

func TestUnmarshal(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    login
		wantErr string // substring; "" means success
		invalid bool   // wraps ErrInvalidJSON
	}{
		{name: "two members", in: `{"client_id":"a","client_secret":"b"}`, want: login{ClientID: "a", Secret: "b"}},
		{name: "whitespace, array and untagged field", in: " \n{ \"names\" : [\"x\"] , \"Plain\": 3 }\t", want: login{Names: []string{"x"}, Plain: 3}},
		{name: "empty object", in: `{}`, want: login{}},
		{name: "member name case matters", in: `{"CLIENT_ID":"a"}`, wantErr: `unknown member; the members are Plain, client_id, client_secret, names`},
		{name: "ignored field", in: `{"Ignored":"a"}`, wantErr: `unknown member`},
		{name: "dash member", in: `{"-":"a"}`, wantErr: `unknown member`},
		{name: "made-up member not quoted", in: `{"hunter2-pasted-as-a-name":"a"}`, wantErr: `unknown member`},
		{name: "duplicate member", in: `{"client_id":"a","client_id":"b"}`, wantErr: "appears twice"},
		{name: "second value", in: `{"client_id":"a"} {}`, wantErr: "data after", invalid: true},
		{name: "trailing garbage", in: `{"client_id":"a"}x`, wantErr: "invalid JSON", invalid: true},
		{name: "wrong type", in: `{"client_id":1}`, wantErr: `member "client_id" has the wrong type`, invalid: true},
		{name: "array", in: `[]`, wantErr: "must be a JSON object", invalid: true},
		{name: "null", in: `null`, wantErr: "must be a JSON object", invalid: true},
		{name: "empty input", in: ``, wantErr: "must be a JSON object", invalid: true},
		{name: "trailing comma", in: `{"client_id":"a",}`, wantErr: "invalid JSON", invalid: true},
		{name: "missing colon", in: `{"client_id" "a"}`, wantErr: "invalid JSON", invalid: true},
		{name: "unterminated object", in: `{"client_id":"a"`, wantErr: "invalid JSON", invalid: true},
		{name: "control character not quoted", in: `{"client_secret":"hunter2-very-secret` + "\x01" + `"}`, wantErr: "invalid JSON", invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got login
			err := Unmarshal([]byte(tt.in), &got)
			if tt.wantErr == "" {
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Errorf("Unmarshal(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || errors.Is(err, ErrInvalidJSON) != tt.invalid {
				t.Errorf("Unmarshal(%q) error = %v; want %q (invalid JSON %v)", tt.in, err, tt.wantErr, tt.invalid)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error %q quotes a value or a made-up member name", err)
			}
		})
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{`{"client_id":"a","names":["b"]}`, `{"Plain":1}`, `{"client_id":"\u0041"}`, `{`, `{"a":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got login
		if Unmarshal(data, &got) != nil {
			return
		}
		// Whatever the strict decoder accepts, encoding/json decodes the same.
		var want login
		if err := json.Unmarshal(data, &want); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("strict %+v, encoding/json %+v (%v)", got, want, err)
		}
	})
}

func TestDecodeRequest(t *testing.T) {
	tests := []struct {
		name     string
		ct, body string
		status   int
		code     string
	}{
		{"JSON", "application/json", `{"client_id":"a"}`, 0, ""},
		{"JSON with charset", "application/json; charset=utf-8", `{"client_id":"a"}`, 0, ""},
		{"text content type", "text/plain", `{"client_id":"a"}`, 415, "unsupported_media_type"},
		{"no content type", "", `{"client_id":"a"}`, 415, "unsupported_media_type"},
		{"body too large", "application/json", `{"client_id":"` + strings.Repeat("a", MaxJSONBody) + `"}`, 413, "payload_too_large"},
		{"unknown member", "application/json", `{"x":1}`, 400, "invalid_request"},
		{"truncated JSON", "application/json", `{"client_id":`, 400, "invalid_json"},
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
			io.WriteString(w, c.ClientID+"|"+c.WorkspaceID)
		}))
	}
	tests := []struct {
		name    string
		headers [][2]string
		status  int
		body    string
	}{
		{"complete", [][2]string{{contract.HeaderClientID, "c1"}, {contract.HeaderWorkspaceID, "w1"}, {contract.HeaderTokenID, "t1"}}, 200, "c1|w1"},
		{"no token id", [][2]string{{contract.HeaderClientID, "c1"}, {contract.HeaderWorkspaceID, "w1"}}, 200, "c1|w1"},
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
