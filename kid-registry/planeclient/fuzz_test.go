package planeclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzKeyAnswer serves arbitrary bytes as the backend's answer for kid
// k1: the source finds a key only when the answer is k1's, valid by the
// key rules.
func FuzzKeyAnswer(f *testing.F) {
	f.Add([]byte(`{"kid":"k1","client_id":"c1","secret":"0123456789abcdef","enc":"A128CBC-HS256","status":"active","created_at":"2026-11-25T12:00:00Z","seq":1}`))
	f.Add([]byte(`{"kid":"k1","client_id":"c1","secret":"short","status":"active"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, answer []byte) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(answer) }))
		defer srv.Close()
		s, err := New(Config{URL: srv.URL, Client: srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		if k, err := s.Lookup(context.Background(), "k1", "192.0.2.1"); err == nil {
			if k.Kid != "k1" || k.Validate() != nil {
				t.Fatalf("accepted %+v", k)
			}
		}
	})
}
