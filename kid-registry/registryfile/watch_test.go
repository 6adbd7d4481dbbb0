package registryfile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/health-data-connect/hdc/internal/testkit"
)

func TestWatcher(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	s := NewSealer(testkit.Keeper(t))
	writeFile(t, path, validFile, 0o600)
	core, logs := observer.New(zap.InfoLevel)
	var reloads, rejections atomic.Int32
	w, err := NewWatcher(path, s, zap.New(core), func(cur *Registry, changed bool, err error) {
		if cur == nil {
			t.Error("observer got no registry")
		}
		if changed {
			reloads.Add(1)
		}
		if err != nil {
			rejections.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const interval = 20 * time.Millisecond
	go w.Run(ctx, interval)

	// A valid change is picked up within a few poll intervals (generous, as
	// the machine may be busy; the poll itself is what is tested).
	var added Entry
	if err := Update(path, s, func(f *File) (err error) {
		added, err = f.Add("c9", "", "", "", false, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !testkit.WaitFor(100*interval, func() bool { _, ok := w.Registry().Lookup(added.Kid); return ok }) {
		t.Fatal("the watcher did not pick up the new key")
	}

	// An invalid file keeps the last good registry, and says why once.
	good := w.Registry()
	writeFile(t, path, `{"keys":[{"kid":"x"}]}`, 0o600)
	if !testkit.WaitFor(100*interval, func() bool { return logs.FilterMessageSnippet("not reloaded").Len() > 0 }) {
		t.Fatal("no warning about the invalid file")
	}
	// Five more reads of the same invalid file.
	n := rejections.Load()
	if !testkit.WaitFor(100*interval, func() bool { return rejections.Load() >= n+5 }) {
		t.Fatal("the watcher stopped reading the file")
	}
	if w.Registry() != good {
		t.Fatal("an invalid file replaced the registry")
	}
	if n := logs.FilterMessageSnippet("not reloaded").Len(); n != 1 {
		t.Fatalf("the same invalid file was logged %d times", n)
	}
	for _, e := range logs.All() {
		for _, f := range e.Context {
			if strings.Contains(f.String, added.Secret) {
				t.Fatal("a log line carries a secret")
			}
		}
	}

	// A file that became readable by others is refused too.
	writeFile(t, path, validFile, 0o644)
	if changed, err := w.Reload(); changed || err == nil {
		t.Fatalf("Reload of a world-readable file: changed=%v err=%v", changed, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if !testkit.WaitFor(100*interval, func() bool { _, ok := w.Registry().Lookup(added.Kid); return !ok }) {
		t.Fatal("the watcher did not recover once the file was fixed")
	}
	if reloads.Load() != 2 || rejections.Load() < 2 {
		t.Fatalf("observer saw %d reloads and %d rejections; want 2 and at least 2", reloads.Load(), rejections.Load())
	}
}

func TestNewWatcherNeedsValidFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	if _, err := NewWatcher(path, nil, zap.NewNop(), nil); err == nil {
		t.Fatal("NewWatcher accepted a missing file")
	}
	writeFile(t, path, `{`, 0o600)
	if _, err := NewWatcher(path, nil, zap.NewNop(), nil); err == nil {
		t.Fatal("NewWatcher accepted an invalid file")
	}
}
