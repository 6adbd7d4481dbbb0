package hdcjwe

import (
	"net/http/httptest"
	"testing"
)

// TestEncrypterSizeHint checks the room the encrypter takes for an answer: the
// upstream's Content-Length when it is within the limit, else the size of
// the first write.
func TestEncrypterSizeHint(t *testing.T) {
	for _, tc := range []struct {
		name, length string
		want         int
	}{
		{"the upstream's length", "70000", 70000},
		{"no length", "", 10},
		{"past the limit", "2000000", 10},
		{"not a number", "7e4", 10},
		{"smaller than the first write", "5", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			if tc.length != "" {
				w.Header().Set("Content-Length", tc.length)
			}
			s := &encrypter{w: w, limit: 1 << 20}
			if got := s.sizeHint(10); got != tc.want {
				t.Errorf("sizeHint = %d, want %d", got, tc.want)
			}
		})
	}
}
