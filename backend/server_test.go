package backend

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/postgres/pgtest"
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

// TestReadyLineNamesTheStores: the "backend ready" line says which
// database, blob store and checkpoint destination the backend uses, and
// quotes none of the credentials their URLs may hold.
func TestReadyLineNamesTheStores(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// config sets the URLs and returns the fields the line must have.
		config func(t *testing.T, c *Config) map[string]string
	}{
		{"SQLite, a directory, the log", func(t *testing.T, c *Config) map[string]string {
			return map[string]string{
				"database":          "sqlite:" + filepath.Join(c.DataDir, "hdc.db"),
				"blobs":             filepath.Join(c.DataDir, "blobs"),
				"audit_checkpoints": "log",
			}
		}},
		{"another SQLite file, S3-compatible buckets", func(t *testing.T, c *Config) map[string]string {
			c.DatabaseURL = "sqlite:" + filepath.Join(c.DataDir, "other.db")
			c.BlobURL = "s3://records/hdc?endpoint=http://minio:s3cret@127.0.0.1:9000&region=us-east-1&path_style=true&token=s3cret"
			c.AuditCheckpoints = "s3://hdc:s3cret@audit?endpoint=https://127.0.0.1:9000&region=us-east-1&path_style=true&kmskeyid=s3cret"
			return map[string]string{
				"database":          c.DatabaseURL,
				"blobs":             "s3://records/hdc at http://minio:xxxxx@127.0.0.1:9000",
				"audit_checkpoints": "s3://hdc:xxxxx@audit at https://127.0.0.1:9000",
			}
		}},
		{"PostgreSQL, a file bucket", func(t *testing.T, c *Config) map[string]string {
			c.DatabaseURL = pgtest.URL(t)
			c.AuditCheckpoints = "file://" + filepath.ToSlash(t.TempDir())
			u, err := url.Parse(c.DatabaseURL)
			if err != nil {
				t.Fatal(err)
			}
			return map[string]string{
				"database":          "postgres://" + u.User.Username() + "@" + u.Host + u.Path,
				"blobs":             filepath.Join(c.DataDir, "blobs"),
				"audit_checkpoints": c.AuditCheckpoints,
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			cfg.DataDir = t.TempDir()
			cfg.Keeper = testKeeper
			want := tt.config(t, &cfg)
			core, logs := observer.New(zapcore.InfoLevel)
			srv, err := New(t.Context(), cfg, zap.New(core))
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			ready := logs.FilterMessage("backend ready").All()
			if len(ready) != 1 {
				t.Fatalf("%d lines say the backend is ready, want 1", len(ready))
			}
			fields := ready[0].ContextMap()
			for k, v := range want {
				if fields[k] != v {
					t.Errorf("%s = %v, want %q", k, fields[k], v)
				}
			}
			if line := fmt.Sprint(fields); strings.Contains(line, "s3cret") {
				t.Errorf("the line quotes a credential: %s", line)
			}
			if u, err := url.Parse(cfg.DatabaseURL); err == nil {
				if pw, ok := u.User.Password(); ok && strings.Contains(fmt.Sprint(fields["database"]), ":"+pw+"@") {
					t.Errorf("database = %v: it quotes the password", fields["database"])
				}
			}
		})
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
	st, err := storage.OpenStore(t.Context(), "", dir)
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
