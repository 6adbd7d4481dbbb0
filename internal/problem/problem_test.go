package problem

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		status     int
		code       string
		detail     string
		wantBearer bool
	}{
		{http.StatusBadRequest, "invalid_encryption", "", false},
		{http.StatusUnauthorized, "invalid_token", "token expired", true},
		{http.StatusNotFound, "not_found", "no such record", false},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Write(rec, New(tt.status, tt.code, tt.detail))
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d", rec.Code, tt.status)
			}
			if ct := rec.Header().Get("Content-Type"); ct != ContentType {
				t.Fatalf("Content-Type = %q", ct)
			}
			if got := rec.Header().Get("WWW-Authenticate") == "Bearer"; got != tt.wantBearer {
				t.Fatalf("WWW-Authenticate = %q", rec.Header().Get("WWW-Authenticate"))
			}
			var p Problem
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatal(err)
			}
			want := Problem{Type: TypeBase + tt.code, Title: http.StatusText(tt.status), Status: tt.status, Detail: tt.detail, Code: tt.code}
			if p != want {
				t.Fatalf("body = %+v, want %+v", p, want)
			}
		})
	}
}

// TestWriteExtended: the extension members follow the problem's own in
// one object; an empty object adds none; what is not an object is refused
// and nothing is written.
func TestWriteExtended(t *testing.T) {
	p := New(http.StatusConflict, "no_checkpoint", "none yet")
	tests := []struct {
		name string
		ext  any
		want string // the body; "" when refused
	}{
		{"members", struct {
			Trails []string `json:"trails"`
		}{[]string{"a"}},
			`{"type":"tag:health-data-connect,2026:problem:no_checkpoint","title":"Conflict","status":409,"detail":"none yet","code":"no_checkpoint","trails":["a"]}`},
		{"none", struct{}{}, string(p.Body())},
		{"not an object", []string{"a"}, ""},
		{"not JSON", func() {}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			err := WriteExtended(rec, p, tt.ext)
			switch {
			case tt.want == "" && (err == nil || rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != ""):
				t.Fatalf("written: %v %q", err, rec.Body)
			case tt.want != "" && (err != nil || rec.Body.String() != tt.want || rec.Code != p.Status || rec.Header().Get("Content-Type") != ContentType):
				t.Fatalf("%v: %d %q, want %q", err, rec.Code, rec.Body, tt.want)
			}
		})
	}
}
