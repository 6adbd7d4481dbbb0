package testkit

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// TestDownAddr: the address refuses connections and no listener of the
// kernel's choosing takes its port; once listening, it accepts.
func TestDownAddr(t *testing.T) {
	t.Parallel()
	addr, listen := DownAddr(t)
	if _, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dialing the down address: %v, want connection refused", err)
	}
	for range 200 {
		ln := Listen(t)
		if ln.Addr().String() == addr {
			t.Fatalf("a new listener took the down address %s", addr)
		}
		ln.Close()
	}
	ln := listen()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dialing once it listens: %v", err)
	}
	c.Close()
}
