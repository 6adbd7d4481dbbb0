package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/checkpoint"
	"github.com/health-data-connect/hdc/backend/blob"
	"github.com/health-data-connect/hdc/backend/blob/blobtest"
	"github.com/health-data-connect/hdc/backend/storage"
)

// TestListenRefusesTheNetwork: hdc-s3 checks no credential, so an address
// that is not loopback is refused unless --allow-network is given, and
// nothing is listened on or opened then.
func TestListenRefusesTheNetwork(t *testing.T) {
	tests := []struct {
		listen       string
		allowNetwork bool
		refused      bool
	}{
		{"127.0.0.1:0", false, false},
		{"localhost:0", false, false},
		{"10.0.0.40:9000", false, true},
		{"0.0.0.0:9000", false, true},
		{":9000", false, true},
		{"[::]:9000", false, true},
		{"10.0.0.40:9000", true, false},
		{":9000", true, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s allowNetwork=%v", tt.listen, tt.allowNetwork), func(t *testing.T) {
			_, err := listenAddr(tt.listen, tt.allowNetwork)
			if refused := err != nil; refused != tt.refused {
				t.Fatalf("listenAddr(%q, %v) = %v, want refused %v", tt.listen, tt.allowNetwork, err, tt.refused)
			}
			if tt.refused && !strings.Contains(err.Error(), "--allow-network") {
				t.Fatalf("the refusal does not say how to listen there: %v", err)
			}
		})
	}
	db := filepath.Join(t.TempDir(), "s3.db")
	if _, err := open(options{listen: "10.0.0.40:9000", db: db, blobBucket: "hdc-records", checkpointBucket: "hdc-audit"}, io.Discard); err == nil {
		t.Fatal("open listened on 10.0.0.40")
	}
	if _, err := open(options{listen: "127.0.0.1:0", db: db, blobBucket: "B_", checkpointBucket: "hdc-audit"}, io.Discard); err == nil ||
		!strings.Contains(err.Error(), `bucket "B_"`) {
		t.Fatalf("open and the bucket name B_: %v", err)
	}
}

// TestNotForProduction: --help and the start-up line say what hdc-s3 is
// not; the start-up line is one line, and the environment goes to
// standard output alone.
func TestNotForProduction(t *testing.T) {
	var help bytes.Buffer
	if err := run(t.Context(), []string{"--help"}, io.Discard, &help); !errors.Is(err, pflag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // serve stops at once
	var stdout, stderr bytes.Buffer
	db := filepath.Join(t.TempDir(), "s3.db")
	if err := run(ctx, []string{"--listen", "127.0.0.1:0", "--db", db}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"--help": help.String(), "the start-up line": stderr.String()} {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), "not for production: it checks no credential") {
			t.Errorf("%s does not say it is not for production:\n%s", what, text)
		}
	}
	if lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n"); len(lines) != 1 {
		t.Errorf("the start-up line is %d lines:\n%s", len(lines), stderr.String())
	}
	env := exports(t, stdout.String())
	for _, name := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "HDC_BLOB_URL", "HDC_AUDIT_CHECKPOINTS"} {
		if env[name] == "" {
			t.Errorf("standard output exports no %s:\n%s", name, stdout.String())
		}
	}
}

// TestBucketsForTheBackend: the environment hdc-s3 prints opens the
// backend's blob store and its audit checkpoints as the backend opens
// them, both keep what they were given when hdc-s3 restarts on its file,
// and a second hdc-s3 on the same file is refused within a second.
func TestBucketsForTheBackend(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s3.db")
	awsIsolated(t)
	key := []byte("a checkpoint key of thirty-two b")
	var blobKey string
	serving(t, db, func(env map[string]string) {
		blobs, err := storage.OpenBlobs(t.Context(), env["HDC_BLOB_URL"], t.TempDir(), storage.LoadAWS)
		if err != nil {
			t.Fatal(err)
		}
		if blobKey, _, err = blobs.Put(t.Context(), strings.NewReader("a consultation")); err != nil {
			t.Fatalf("a blob through %s: %v", env["HDC_BLOB_URL"], err)
		}
		to, err := checkpoint.Open(t.Context(), env["HDC_AUDIT_CHECKPOINTS"], zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		defer to.Close()
		head := checkpoint.Head{Head: audit.Head{Workspace: "clinic-1", Last: audit.Link{Seq: 7}}, At: time.Now()}
		if err := to.Write(t.Context(), checkpoint.New([]checkpoint.Head{head}, time.Now(), "backend-1", key)); err != nil {
			t.Fatalf("a checkpoint through %s: %v", env["HDC_AUDIT_CHECKPOINTS"], err)
		}
		if _, err := open(options{listen: "127.0.0.1:0", db: db, blobBucket: "hdc-records", checkpointBucket: "hdc-audit"}, io.Discard); err == nil ||
			!strings.Contains(err.Error(), "held by another process") {
			t.Fatalf("a second hdc-s3 on the file: %v", err)
		}
	})
	serving(t, db, func(env map[string]string) { // restarted, on another port
		blobs, err := storage.OpenBlobs(t.Context(), env["HDC_BLOB_URL"], t.TempDir(), storage.LoadAWS)
		if err != nil {
			t.Fatal(err)
		}
		rc, err := blobs.Open(t.Context(), blobKey)
		if err != nil {
			t.Fatalf("the blob after a restart: %v", err)
		}
		defer rc.Close()
		if b, err := io.ReadAll(rc); err != nil || string(b) != "a consultation" {
			t.Fatalf("the blob after a restart: %q, %v", b, err)
		}
		c, err := checkpoint.Latest(t.Context(), env["HDC_AUDIT_CHECKPOINTS"], key)
		if err != nil || len(c.Trails) != 1 || c.Trails[0].Workspace != "clinic-1" || c.Trails[0].Seq != 7 {
			t.Fatalf("the checkpoint after a restart: %+v, %v", c, err)
		}
	})
}

// TestBlobConformance runs the blob store's conformance suite on the
// backend's S3 blob store over hdc-s3, each subtest under a prefix of its
// own in the printed bucket.
func TestBlobConformance(t *testing.T) {
	awsIsolated(t)
	serving(t, filepath.Join(t.TempDir(), "s3.db"), func(env map[string]string) {
		n := 0
		blobtest.Run(t, func(t *testing.T) blob.Store {
			n++
			url := strings.Replace(env["HDC_BLOB_URL"], "?", fmt.Sprintf("/suite-%d?", n), 1)
			blobs, err := storage.OpenBlobs(t.Context(), url, t.TempDir(), storage.LoadAWS)
			if err != nil {
				t.Fatal(err)
			}
			return blobs
		})
	})
}

// awsIsolated keeps the AWS SDK from the machine's configuration files and
// instance metadata: the credentials are the ones hdc-s3 prints.
func awsIsolated(t *testing.T) {
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// serving runs an hdc-s3 on db and loopback while use runs, with the
// environment it printed (its credentials set in the process's, as a
// backend's shell has them), then stops it.
func serving(t *testing.T, db string, use func(env map[string]string)) {
	t.Helper()
	s, err := open(options{listen: "127.0.0.1:0", db: db, blobBucket: "hdc-records", checkpointBucket: "hdc-audit"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.serve(ctx) }()
	env := exports(t, strings.Join(s.environment(), "\n"))
	for _, name := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		t.Setenv(name, env[name])
	}
	use(env)
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
}

// exports reads the shell lines hdc-s3 prints: export NAME=value …, a
// value in single quotes or bare; comments.
func exports(t *testing.T, text string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		rest, ok := strings.CutPrefix(line, "export ")
		if !ok {
			t.Fatalf("not an export: %q", line)
		}
		for _, kv := range strings.Fields(rest) {
			name, value, _ := strings.Cut(kv, "=")
			env[name] = strings.Trim(value, "'")
		}
	}
	return env
}
