package backend

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestNewGivesUpWhenItsContextEnds: a start-up stuck on a database that
// accepts connections and never answers ends when the caller's context
// does (hdc-backend cancels it on SIGTERM), instead of hanging.
func TestNewGivesUpWhenItsContextEnds(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.Keeper = testKeeper
	cfg.DatabaseURL = "postgres://hdc:hdc@" + testkit.Silent(t) + "/hdc?sslmode=disable&connect_timeout=0"
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

func TestListen(t *testing.T) {
	f, addr := testkit.ListenFile(t)
	tests := []struct {
		name, addr string
		want       string // the listener's address; "" for an error
	}{
		{"host and port", "127.0.0.1:0", "127.0.0.1:"},
		{"inherited socket", fmt.Sprintf("fd/%d", f.Fd()), addr},
		{"not a number", "fd/x", ""},
		{"not a socket", "fd/0", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := listen(tt.addr)
			if tt.want == "" {
				if err == nil {
					ln.Close()
					t.Fatalf("listen(%q) succeeded", tt.addr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			if !strings.HasPrefix(ln.Addr().String(), tt.want) {
				t.Fatalf("listening on %s, want %s", ln.Addr(), tt.want)
			}
		})
	}
}

// TestListenAndServeChecksInheritedSockets: an inherited public socket
// bound beyond loopback is refused without the edge's credential, as a
// configured address would be.
func TestListenAndServeChecksInheritedSockets(t *testing.T) {
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.(*net.TCPListener).File()
	ln.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.Keeper = testKeeper
	cfg.Listen = fmt.Sprintf("fd/%d", f.Fd())
	cfg.InternalListen = "127.0.0.1:0"
	srv, err := New(t.Context(), cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := srv.ListenAndServe(t.Context()); err == nil || !strings.Contains(err.Error(), "is not loopback: it needs the hop's mutual TLS") {
		t.Fatalf("ListenAndServe = %v", err)
	}
}

// TestServeRunsAuditRetention: the server runs the retention job at start,
// so a trail's records older than --audit-retention are gone soon after,
// the prune recorded, and the newer ones kept.
func TestServeRunsAuditRetention(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenStore(t.Context(), "", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, age := range []time.Duration{48 * time.Hour, time.Minute} {
		if _, err := st.AppendAudit(t.Context(), audit.Event{At: time.Now().Add(-age), Action: audit.LoginFailed, Outcome: audit.Denied}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	h := start(t, func(c *Config) { c.DataDir = dir; c.AuditRetention = 24 * time.Hour })
	installation := store.AuditFilter{Workspace: ""}
	testkit.Eventually(t, 10*time.Second, "the expired record pruned", func() bool {
		rs, err := h.srv.store.ListAudit(t.Context(), installation)
		return err == nil && len(rs) == 2 && rs[1].Action == audit.RetentionPrune
	})
	rs, err := h.srv.store.ListAudit(t.Context(), installation)
	if err != nil || rs[0].Seq != 2 || rs[1].Pruned.From != 1 || rs[1].Pruned.Last.Seq != 1 {
		t.Errorf("the installation's trail = %+v (%v), want record 2 and the prune of record 1", rs, err)
	}
}
