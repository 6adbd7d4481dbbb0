package testkit

import (
	"net"
	"os"
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
// flags). Another process may take the port in between; prefer Listen or
// ListenFile.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
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
