package backend

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"go.uber.org/zap"
)

// TestNewGivesUpWhenItsContextEnds: a start-up stuck on a database that
// accepts connections and never answers ends when the caller's context
// does (hdc-backend cancels it on SIGTERM), instead of hanging.
func TestNewGivesUpWhenItsContextEnds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.DatabaseURL = "postgres://hdc:hdc@" + ln.Addr().String() + "/hdc?sslmode=disable&connect_timeout=0"
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		srv, err := New(ctx, cfg, zap.NewNop())
		if err == nil {
			srv.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("New = %v, want the context's error", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("New did not return after its context ended")
	}
}
