package adminclient

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/testkit"
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
	c, err := New([]string{srv.URL}, srv.Client().Transport.(*http.Transport).TLSClientConfig, 0)
	if err != nil {
		t.Fatal(err)
	}
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
	c, err := New([]string{"https://" + addr}, cfg, 0)
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
	c, err := New([]string{srv.URL}, srv.Client().Transport.(*http.Transport).TLSClientConfig, 0)
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

// TestFailsOver: with the first of two backends refusing connections, or
// accepting them and never answering, a read and a change are answered
// by the second, the change once under its key; with both down, the
// error names each backend and what it did, within the patience.
func TestFailsOver(t *testing.T) {
	t.Parallel()
	var changes sync.Map // Idempotency-Key → how many times the second backend got it
	second := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if key := r.Header.Get(contract.HeaderIdempotencyKey); key != "" {
			n, _ := changes.LoadOrStore(key, new(atomic.Int32))
			n.(*atomic.Int32).Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"name":"alice@example.org","role":"operator","client_id":"c1","client_secret":"s","workspace_id":"w1"}`))
	}))
	defer second.Close()
	cfg := second.Client().Transport.(*http.Transport).TLSClientConfig
	hung := "https://" + testkit.HungAddr(t)
	refused := "https://" + testkit.FreeAddr(t)
	for _, tt := range []struct {
		name  string
		first string
	}{{"refused", refused}, {"hung", hung}} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New([]string{tt.first, second.URL}, cfg, 300*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if p, err := c.Whoami(t.Context()); err != nil || p.Name != "alice@example.org" {
				t.Fatalf("Whoami: %+v, %v", p, err)
			}
			key := uuid.NewString()
			if _, err := c.CreateClient(WithIdempotencyKey(t.Context(), key), adminapi.CreateClientRequest{WorkspaceID: "w1"}); err != nil {
				t.Fatalf("CreateClient: %v", err)
			}
			if n, _ := changes.Load(key); n == nil || n.(*atomic.Int32).Load() != 1 {
				t.Fatalf("the second backend got the change %v times, want once", n)
			}
		})
	}
	t.Run("none answers", func(t *testing.T) {
		c, err := New([]string{refused, hung}, cfg, 300*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, err = c.Whoami(t.Context())
		for _, want := range []string{"no backend of the Admin API served the request: ", refused + ": connection refused",
			hung + ": no answer within 300ms"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v, want it to say %q", err, want)
			}
		}
	})
}
