package tokenauth

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/health-data-connect/hdc/internal/testkit"
)

func TestFileKeySource(t *testing.T) {
	ctx := context.Background()
	k1, k2 := testkit.NewSigner("k1"), testkit.NewSigner("k2")
	path := filepath.Join(t.TempDir(), "jwks.json")
	writeFile(t, path, testkit.JWKS(k1))
	clk := testkit.NewClock(epoch)
	core, logs := observer.New(zap.ErrorLevel)
	src, err := NewFileKeySource(path, FileOptions{Now: clk.Now, Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	mustKey := func(kid string, want *testkit.Signer) {
		t.Helper()
		k, err := src.Key(ctx, kid)
		if err != nil {
			t.Fatalf("Key(%q): %v", kid, err)
		}
		if !k.Equal(want.Pub) {
			t.Fatalf("Key(%q) returned another key", kid)
		}
	}
	mustUnknown := func(kid string) {
		t.Helper()
		if _, err := src.Key(ctx, kid); !errors.Is(err, ErrUnknownKey) {
			t.Fatalf("Key(%q): err = %v, want ErrUnknownKey", kid, err)
		}
	}
	mustKey("k1", k1)
	mustUnknown("k2")

	// A new kid is picked up on first use, without waiting for the interval.
	writeFile(t, path, testkit.JWKS(k1, k2))
	mustKey("k2", k2)

	// A removed kid goes at the next check.
	writeFile(t, path, testkit.JWKS(k2))
	mustKey("k1", k1) // not looked at yet
	clk.Advance(DefaultCheckInterval)
	mustUnknown("k1")

	// An invalid file leaves the last good set, and is reported once.
	writeFile(t, path, []byte(`{"keys":[`))
	clk.Advance(DefaultCheckInterval)
	mustKey("k2", k2)
	mustUnknown("k1")
	if logs.Len() != 1 {
		t.Fatalf("%d errors logged for one bad file, want 1", logs.Len())
	}

	// So does a missing file.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	clk.Advance(DefaultCheckInterval)
	mustKey("k2", k2)
	if logs.Len() != 2 {
		t.Fatalf("%d errors logged, want 2", logs.Len())
	}

	// Written in place (same file, another size): reloaded.
	if err := os.WriteFile(path, testkit.JWKS(k1), 0o600); err != nil {
		t.Fatal(err)
	}
	mustKey("k1", k1)
	clk.Advance(DefaultCheckInterval)
	mustUnknown("k2")
}

func TestFileKeySourceModTime(t *testing.T) {
	ctx := context.Background()
	a, b := testkit.NewSigner("a"), testkit.NewSigner("b")
	path := filepath.Join(t.TempDir(), "jwks.json")
	writeFile(t, path, testkit.JWKS(a))
	src, err := NewFileKeySource(path, FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Same file, same size, only the modification time tells.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(testkit.JWKS(b)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(path, time.Time{}, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Key(ctx, "b"); err != nil {
		t.Fatalf("the rewritten file was not reloaded: %v", err)
	}
}

func TestNewFileKeySource(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, []byte(`not json`))
	big := filepath.Join(dir, "big.json")
	writeFile(t, big, make([]byte, maxJWKSSize+1))
	for _, path := range []string{filepath.Join(dir, "missing.json"), bad, big, dir} {
		if _, err := NewFileKeySource(path, FileOptions{}); err == nil {
			t.Errorf("NewFileKeySource(%q) accepted", filepath.Base(path))
		}
	}
	good := filepath.Join(dir, "good.json")
	writeFile(t, good, testkit.JWKS(testkit.NewSigner("k1")))
	if _, err := NewFileKeySource(good, FileOptions{CheckInterval: -1}); err == nil {
		t.Error("negative interval accepted")
	}
}

func TestFileKeySourceVerifies(t *testing.T) {
	k := testkit.NewSigner("k1")
	path := filepath.Join(t.TempDir(), "jwks.json")
	writeFile(t, path, testkit.JWKS(k))
	src, err := NewFileKeySource(path, FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(src, VerifierOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := v.Verify(context.Background(), k.Token(claimsAt(time.Now())), ModeAccess)
	if err != nil {
		t.Fatal(err)
	}
	if c.KeyID != "k1" {
		t.Fatalf("kid = %q", c.KeyID)
	}
}
