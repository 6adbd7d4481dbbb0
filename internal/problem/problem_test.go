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
