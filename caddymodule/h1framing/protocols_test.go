package h1framing

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
)

// The places of the wrapper in a server's listener chain, as Caddy's
// listener_wrappers order them around tls.
const (
	plain       = "plain"            // no TLS: the wrapper reads the connection
	beforeTLS   = "before tls"       // the wrapper sees TLS records (its old place)
	afterTLS    = "after tls"        // the wrapper sees the decrypted bytes
	testRequest = "0123456789abcdef" // a request body
)

// server is net/http behind the wrapper, placed as place says, serving both
// HTTP/1.1 and HTTP/2 (over TLS by ALPN, in clear text by prior
// knowledge), as Caddy's servers do.
type server struct {
	addr  string
	place string
	roots *x509.CertPool
}

func startServer(t *testing.T, place string, h http.Handler) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{addr: ln.Addr().String(), place: place}
	var cfg *tls.Config
	if place != plain {
		var cert tls.Certificate
		cert, s.roots = selfSigned(t)
		cfg = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
	}
	switch place {
	case plain:
		ln = Listener{ln}
	case beforeTLS:
		ln = tls.NewListener(Listener{ln}, cfg)
	case afterTLS:
		ln = hiding{Listener{tls.NewListener(ln, cfg)}}
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: h, Protocols: new(http.Protocols),
		ConnContext: tlsContext}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	if place == beforeTLS {
		srv.Protocols.SetHTTP2(true) // net/http terminates TLS itself: ALPN h2
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

// Listener wraps each connection it accepts with Wrap, as the Caddy module
// does.
type Listener struct{ net.Listener }

func (l Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return Wrap(c, nil), nil
}

// hiding hides the ConnectionState of a wrapper's connection from
// net/http, as Caddy's servers do: net/http then serves HTTP/2 over the
// decrypted bytes (it looks for HTTP/2's preface, as for h2c), and the
// TLS state reaches the request through the connection's context
// (tlsContext), as Caddy sets Request.TLS from it.
type hiding struct{ net.Listener }

type hidden struct{ net.Conn }

func (l hiding) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	return hidden{c}, err
}

type tlsKey struct{}

func tlsContext(ctx context.Context, c net.Conn) context.Context {
	if h, ok := c.(hidden); ok {
		if cs, ok := h.Conn.(connectionStater); ok {
			return context.WithValue(ctx, tlsKey{}, cs) // its handshake comes later
		}
	}
	return ctx
}

// selfSigned makes a certificate for 127.0.0.1 and the pool that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "h1framing test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, roots
}

// echo answers with the request's protocol, whether it came over TLS, and
// its body.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	cs, ok := r.Context().Value(tlsKey{}).(connectionStater)
	fmt.Fprintf(w, "%s tls=%t %s", r.Proto, r.TLS != nil || ok && cs.ConnectionState().HandshakeComplete, body)
})

// TestConnServesEveryProtocol: behind the wrapper, wherever it sits, every
// protocol a Caddy server offers is answered, 40 requests on one
// connection: the wrapper never holds bytes it does not track.
func TestConnServesEveryProtocol(t *testing.T) {
	tests := []struct {
		place, proto string
		wantTLS      bool
	}{
		{plain, "HTTP/1.1", false},
		{plain, "HTTP/2.0", false}, // h2c with prior knowledge
		{beforeTLS, "HTTP/1.1", true},
		{beforeTLS, "HTTP/2.0", true},
		{afterTLS, "HTTP/1.1", true},
		{afterTLS, "HTTP/2.0", true},
	}
	for _, tt := range tests {
		t.Run(tt.place+", "+tt.proto, func(t *testing.T) {
			s := startServer(t, tt.place, echo)
			client, base := s.client(tt.proto)
			conns := 0
			trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
				if !info.Reused {
					conns++
				}
			}}
			for i := range 40 {
				req, _ := http.NewRequest(http.MethodPost, base+"/", strings.NewReader(testRequest))
				req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("request %d: %v", i+1, err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				want := fmt.Sprintf("%s tls=%t %s", tt.proto, tt.wantTLS, testRequest)
				if string(body) != want {
					t.Fatalf("request %d: %q, want %q", i+1, body, want)
				}
			}
			if conns != 1 {
				t.Fatalf("%d connections for 40 requests, want 1", conns)
			}
		})
	}
}

// client is an HTTP client of the server speaking proto, and the base URL.
func (s *server) client(proto string) (*http.Client, string) {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	scheme := "https://"
	switch {
	case s.place == plain && proto == "HTTP/2.0":
		tr.Protocols.SetUnencryptedHTTP2(true)
		scheme = "http://"
	case s.place == plain:
		tr.Protocols.SetHTTP1(true)
		scheme = "http://"
	case proto == "HTTP/2.0":
		tr.Protocols.SetHTTP2(true)
	default:
		tr.Protocols.SetHTTP1(true)
	}
	tr.TLSClientConfig = &tls.Config{RootCAs: s.roots}
	return &http.Client{Transport: tr, Timeout: 5 * time.Second}, scheme + s.addr
}

// dial opens a connection to the server: TLS with ALPN http/1.1 where it
// serves TLS.
func (s *server) dial(t *testing.T) net.Conn {
	t.Helper()
	if s.place == plain {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c, err := tls.Dial("tcp", s.addr, &tls.Config{RootCAs: s.roots, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestConnRefusesAmbiguousInsideTLS: where the wrapper sees decrypted
// bytes, a request with both lengths is refused and its connection closed,
// over TLS as in clear text; nothing after it is served.
func TestConnRefusesAmbiguousInsideTLS(t *testing.T) {
	for _, place := range []string{plain, afterTLS} {
		t.Run(place, func(t *testing.T) {
			s := startServer(t, place, echo)
			got := exchangeOn(t, s.dial(t), []string{get + post + both + get}, 3)
			if fmt.Sprint(got) != "[200 200 400]" {
				t.Fatalf("answers %v, want [200 200 400] and the connection closed", got)
			}
		})
	}
}

// TestConnTracksThroughAnUpgradeNotTaken: a request asking to switch
// protocols that the server answers as HTTP/1.1 leaves the connection
// HTTP/1.1, and the framing check goes on: an ambiguous request after it
// is still refused.
func TestConnTracksThroughAnUpgradeNotTaken(t *testing.T) {
	upgrade := "GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n"
	connect := "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n"
	for _, place := range []string{plain, afterTLS} {
		for name, first := range map[string]string{"upgrade": upgrade, "tunnel": connect} {
			t.Run(place+", "+name, func(t *testing.T) {
				s := startServer(t, place, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(http.StatusMethodNotAllowed) // neither switches nor tunnels
				}))
				got := exchangeOn(t, s.dial(t), []string{first + both + get}, 2)
				if fmt.Sprint(got) != "[405 400]" {
					t.Fatalf("answers %v, want [405 400] and the connection closed", got)
				}
			})
		}
	}
}

// TestConnPassesASwitchedConnection: once the server switches protocols
// (101) or opens a tunnel (2xx to CONNECT), what follows is no longer
// HTTP/1.x: every byte passes at once, whatever it looks like.
func TestConnPassesASwitchedConnection(t *testing.T) {
	requests := map[string]string{
		"101": "GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n",
		"200": "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n",
	}
	for _, place := range []string{plain, afterTLS} {
		for status, request := range requests {
			t.Run(place+", "+status, func(t *testing.T) {
				s := startServer(t, place, http.HandlerFunc(switchToEcho))
				c := s.dial(t)
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				br := bufio.NewReader(c)
				if _, err := io.WriteString(c, request); err != nil {
					t.Fatal(err)
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(resp.StatusCode) != status {
					t.Fatalf("status %d", resp.StatusCode)
				}
				// No line end, header-like text, both lengths: echoed.
				for _, msg := range []string{"no line end", both, "\x00\x01binary"} {
					if _, err := io.WriteString(c, msg); err != nil {
						t.Fatal(err)
					}
					got := make([]byte, len(msg))
					if _, err := io.ReadFull(br, got); err != nil || string(got) != msg {
						t.Fatalf("echo of %q: %q, %v", msg, got, err)
					}
				}
			})
		}
	}
}

// switchToEcho takes the connection over, answers 101 to an upgrade or 200
// to CONNECT, and then echoes every byte.
func switchToEcho(w http.ResponseWriter, r *http.Request) {
	c, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer c.Close()
	if r.Method == http.MethodConnect {
		_, _ = brw.WriteString("HTTP/1.1 200 OK\r\n\r\n")
	} else {
		_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	}
	_ = brw.Flush()
	buf := make([]byte, 512)
	for {
		n, err := brw.Read(buf)
		if n > 0 {
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
