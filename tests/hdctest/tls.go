package hdctest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// tlsSite is the reference Caddyfile's HTTPS site on a loopback port, as
// an operator who changes only the site address gets it: a certificate
// from Caddy's own authority (the Caddyfile never installs its root in
// the host's trust store), HTTP/1.1 and HTTP/2 over TCP, HTTP/3 over UDP on
// the same port, nothing on port 80. The port is reserved for TCP and UDP
// until the edge answers (bound with SO_REUSEPORT, as Caddy binds its
// own, but not listening), so that no other program takes it between.
func tlsSite(t *testing.T) site {
	t.Helper()
	port, release := reservePort(t)
	base := fmt.Sprintf("https://127.0.0.1:%d", port)
	return site{
		base: base,
		env:  []string{"HDC_SITE=" + base, "HDC_BIND=127.0.0.1"},
		// Only to wait for the edge: its authority is made as it starts.
		probe: &http.Client{Timeout: 5 * time.Second,
			Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}},
		ready: func(s *Stack) {
			release()
			s.trustEdgeRoot()
		},
	}
}

// StartTLSStack is startStack with the edge serving HTTPS (tlsSite).
func StartTLSStack(t *testing.T) *Stack {
	t.Helper()
	return StartTLSStackEnv(t, nil, nil)
}

// StartTLSStackEnv is StartTLSStack with backendEnv added to the backend's
// environment and edgeEnv to the edge's.
func StartTLSStackEnv(t *testing.T, backendEnv, edgeEnv []string) *Stack {
	t.Helper()
	return StartStackSite(t, tlsSite(t), backendEnv, edgeEnv)
}

// EdgeRoot is the file of the root certificate of Caddy's authority, which
// clients of a TLS site trust.
func (s *Stack) EdgeRoot() string {
	return filepath.Join(s.Dir, "share", "caddy", "pki", "authorities", "local", "root.crt")
}

// trustEdgeRoot makes the stack's HTTP client trust the edge's authority
// alone.
func (s *Stack) trustEdgeRoot() {
	s.T.Helper()
	pem, err := os.ReadFile(s.EdgeRoot())
	if err != nil {
		s.T.Fatal(err)
	}
	s.Roots = x509.NewCertPool()
	if !s.Roots.AppendCertsFromPEM(pem) {
		s.T.Fatalf("%s holds no certificate", s.EdgeRoot())
	}
	s.HTTP = s.Checked(&http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: s.Roots}, ForceAttemptHTTP2: true}})
}

// DialEdge opens a connection to the stack's edge: TLS with ALPN
// http/1.1 on a TLS site, for a test that writes HTTP/1.1 by hand.
func (s *Stack) DialEdge(t *testing.T) net.Conn {
	t.Helper()
	addr := s.Edge[strings.Index(s.Edge, "//")+2:]
	var conn net.Conn
	var err error
	if s.Roots != nil {
		conn, err = tls.Dial("tcp", addr, &tls.Config{RootCAs: s.Roots, NextProtos: []string{"http/1.1"}})
	} else {
		conn, err = net.Dial("tcp", addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// reservePort returns a loopback port free for both TCP and UDP, bound to
// this process with SO_REUSEPORT until release is called (or the test
// ends): Caddy, which sets SO_REUSEPORT too, binds it meanwhile. The TCP
// socket never listens, so it takes no connection; the UDP one would
// share datagrams, so it is released once the edge is up, before any
// HTTP/3 client starts.
func reservePort(t *testing.T) (int, func()) {
	t.Helper()
	for range 20 {
		fd, port, err := bindReusableTCP()
		if err != nil {
			t.Fatal(err)
		}
		lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
			var serr error
			if err := c.Control(func(fd uintptr) { serr = setReusePort(int(fd)) }); err != nil {
				return err
			}
			return serr
		}}
		udp, err := lc.ListenPacket(context.Background(), "udp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			_ = syscall.Close(fd) // that port is taken for UDP: another
			continue
		}
		release := sync.OnceFunc(func() {
			_ = syscall.Close(fd)
			_ = udp.Close()
		})
		t.Cleanup(release)
		return port, release
	}
	t.Fatal("no loopback port free for both TCP and UDP")
	return 0, nil
}

// bindReusableTCP binds a TCP socket with SO_REUSEPORT to a free loopback
// port, without listening.
func bindReusableTCP() (int, int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, 0, err
	}
	sa, err := func() (syscall.Sockaddr, error) {
		if err := setReusePort(fd); err != nil {
			return nil, err
		}
		if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return nil, err
		}
		return syscall.Getsockname(fd)
	}()
	if err != nil {
		_ = syscall.Close(fd)
		return 0, 0, err
	}
	return fd, sa.(*syscall.SockaddrInet4).Port, nil
}

func setReusePort(fd int) error {
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
}
