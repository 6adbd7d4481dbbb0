package testkit

import (
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// Listen returns a listener on a free loopback port, closed at cleanup.
// Servers of the test's own process take it as it is, so no port is ever
// closed and reused.
func Listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// ListenFile returns a listening socket on a free loopback port as a file,
// with its address, for a server that takes an inherited socket: a child
// process (exec.Cmd.ExtraFiles) or Caddy, whose addresses may be "fd/N". The
// file is closed at cleanup; the server holds its own copy.
func ListenFile(t testing.TB) (*os.File, string) {
	t.Helper()
	f, addr, err := OpenListenFile()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, addr
}

// OpenListenFile is ListenFile for a caller without a testing.TB (the bench
// command), which closes the file itself.
func OpenListenFile() (*os.File, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	defer ln.Close()
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		return nil, "", err
	}
	return f, ln.Addr().String(), nil
}

// FreeAddr returns a loopback address that was free a moment ago, for a
// program that can only be told an address to bind itself (hdc up's
// flags), reserved for the test until its cleanup. Its port is drawn below
// Linux's ephemeral range (32768 on), where neither the source port of a
// connection nor a listener on port 0 can take it before the program binds
// it, and reserved by a lock on a file of its number (reservePort), which
// every test process of the run takes, so that no other test draws it
// meanwhile. Prefer Listen or ListenFile.
func FreeAddr(t testing.TB) string {
	t.Helper()
	for range 100 {
		port := 10000 + rand.IntN(22768)
		release, ok := reservePort(port)
		if !ok {
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			t.Cleanup(release)
			return addr
		}
		release()
	}
	t.Fatal("no free loopback port below the ephemeral range")
	return ""
}

// reservePort takes the lock of port, a file of its number under the
// temporary directory that FreeAddr in any process of the machine locks
// before it draws the port, and returns its release; false when another
// holds it. The lock goes with the file's closing, or the process's end.
func reservePort(port int) (release func(), ok bool) {
	dir := filepath.Join(os.TempDir(), "hdc-test-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, false
	}
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}

// Silent returns the address of a loopback listener that accepts every
// connection and never sends a byte: a peer that hangs. The listener and
// the connections it holds are closed at cleanup.
func Silent(t testing.TB) string {
	t.Helper()
	ln := Listen(t)
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	return ln.Addr().String()
}

// HungAddr returns the address of a loopback listener that accepts
// connections and never answers on them: a backend that hangs. It and its
// connections close when the test ends.
func HungAddr(t testing.TB) string {
	t.Helper()
	l := Listen(t)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// DownAddr returns a loopback address that refuses connections, as a
// server that is down, and that nothing else takes meanwhile: a socket
// bound to it that does not listen. (A port closed and left free would
// be the kernel's to hand to the next listener, another test's server,
// which would then answer in the down server's place.) listen makes the
// socket listen, the server back up, and returns its listener; both
// close when the test ends.
func DownAddr(t testing.TB) (addr string, listen func() net.Listener) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "a bound socket")
	t.Cleanup(func() { f.Close() })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	return addr, func() net.Listener {
		t.Helper()
		if err := syscall.Listen(fd, syscall.SOMAXCONN); err != nil {
			t.Fatal(err)
		}
		ln, err := net.FileListener(f) // a listener of its own on a copy of fd
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return ln
	}
}
