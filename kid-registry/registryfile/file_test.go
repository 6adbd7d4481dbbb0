package registryfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
)

func writeFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // WriteFile's mode is masked by umask
		t.Fatal(err)
	}
}

func TestLoadPermissions(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		mode    os.FileMode
		wantErr bool
	}{
		{0o600, false},
		{0o400, false},
		{0o640, true},
		{0o604, true},
		{0o660, true},
		{0o644, true},
		{0o602, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%04o", tt.mode), func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("keys-%o.json", tt.mode))
			writeFile(t, path, validFile, tt.mode)
			_, err := Load(path, nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Load err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr && !strings.Contains(err.Error(), "chmod 600") {
				t.Fatalf("error does not tell the fix: %v", err)
			}
		})
	}
	if _, err := Load(dir, nil); err == nil {
		t.Fatal("Load accepted a directory")
	}
}

func TestUpdateWritesPrivateValidFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	s := NewSealer(testkit.Keeper(t))
	var added Entry
	err := Update(path, s, func(f *File) (err error) {
		added, err = f.Add("c1", "", "", "", false, time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %04o, want 0600", fi.Mode().Perm())
	}
	r, err := Load(path, s)
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := r.Lookup(added.Kid); !ok || k.Secret != added.Secret {
		t.Fatal("the added key is not in the file")
	}
	// A change that breaks validation writes nothing.
	before, _ := os.ReadFile(path)
	err = Update(path, s, func(f *File) error {
		f.Keys[0].Secret = "short"
		return nil
	})
	if err == nil {
		t.Fatal("Update wrote an invalid registry")
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Fatal("a refused update changed the file")
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 2 { // keys.json, keys.json.lock
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

// TestConcurrentUpdates runs 20 adds at once; each must survive. The lock is
// taken through a separate open file each time, so goroutines exclude each
// other as processes do (cmd/hdc tests the same with processes).
func TestConcurrentUpdates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	s := NewSealer(testkit.Keeper(t))
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- Update(path, s, func(f *File) error {
				_, err := f.Add(fmt.Sprintf("client-%d", i), "", "", "", false, time.Now())
				return err
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	r, err := Load(path, s)
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != n {
		t.Fatalf("%d keys in the file, want %d", r.Len(), n)
	}
}
