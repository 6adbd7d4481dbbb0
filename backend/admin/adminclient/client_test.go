package adminclient

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/internal/contract"
)

// TestChangeSentAgainUnderItsKey: a change whose connection fails before
// the answer is sent again with the same Idempotency-Key; a read carries
// none.
func TestChangeSentAgainUnderItsKey(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	keys := map[string][]string{} // by path: the key of each request
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys[r.URL.Path] = append(keys[r.URL.Path], r.Header.Get(contract.HeaderIdempotencyKey))
		first := len(keys[r.URL.Path]) == 1
		mu.Unlock()
		if first && r.Method == http.MethodPost { // the connection fails before any answer
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"client_id":"c1","client_secret":"s","workspace_id":"w1"}`))
	}))
	defer srv.Close()
	c, err := New(srv.URL, srv.Client().Transport.(*http.Transport).TLSClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	c.http.Transport.(*http.Transport).ForceAttemptHTTP2 = false // Hijack is HTTP/1.1's
	if cred, err := c.CreateClient(t.Context(), adminapi.CreateClientRequest{WorkspaceID: "w1"}); err != nil || cred.ClientID != "c1" {
		t.Fatalf("CreateClient: %+v, %v", cred, err)
	}
	if _, err := c.GetClient(t.Context(), "c1"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	created := keys[adminapi.Prefix+"/clients"]
	if len(created) != 2 || created[0] == "" || created[0] != created[1] {
		t.Fatalf("the change's requests carried %q: want two under one key", created)
	}
	if got := keys[adminapi.Prefix+"/clients/c1"]; len(got) != 1 || got[0] != "" {
		t.Fatalf("the read's requests carried %q: want one, without a key", got)
	}
}

// TestWaitsForABackendThatStarts: a request to a backend that does not
// listen yet (starting, or restarting on a fleet) is sent once it does,
// read or change, since a refused connection sent nothing.
func TestWaitsForABackendThatStarts(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // refused until the server below listens there
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"name":"alice@example.org","role":"operator"}`))
	}))
	defer srv.Close()
	srv.StartTLS() // for its certificate; it moves to addr below
	cfg := srv.Client().Transport.(*http.Transport).TLSClientConfig
	srv.Listener.Close()
	c, err := New("https://"+addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		p   adminapi.Person
		err error
	}
	done := make(chan answer, 1)
	go func() {
		p, err := c.Whoami(t.Context())
		done <- answer{p, err}
	}()
	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	go srv.Config.Serve(tls.NewListener(l, srv.TLS))
	if a := <-done; a.err != nil || a.p.Name != "alice@example.org" {
		t.Fatalf("Whoami: %+v, %v", a.p, a.err)
	}
}

// TestCallersKey: a change sent under WithIdempotencyKey carries the
// caller's key, each time it is sent; without one, each change its own;
// a read none.
func TestCallersKey(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Method+" "+r.Header.Get(contract.HeaderIdempotencyKey))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"client_id":"c1","client_secret":"s","workspace_id":"w1"}`))
	}))
	defer srv.Close()
	c, err := New(srv.URL, srv.Client().Transport.(*http.Transport).TLSClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	form := WithIdempotencyKey(t.Context(), "form-1")
	for _, ctx := range []context.Context{form, form, t.Context(), t.Context()} {
		if _, err := c.CreateClient(ctx, adminapi.CreateClientRequest{WorkspaceID: "w1"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.GetClient(form, "c1"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 5 || keys[0] != "POST form-1" || keys[1] != "POST form-1" || keys[2] == keys[3] ||
		keys[2] == "POST form-1" || keys[2] == "POST " || keys[4] != "GET " {
		t.Fatalf("the requests carried %q: want the caller's key twice, two fresh keys, and none on the read", keys)
	}
}
