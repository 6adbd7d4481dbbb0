package privatefile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "secret.json")
	for _, tt := range []struct{ name, data string }{{"new file", "one"}, {"replaced", "two"}} {
		t.Run(tt.name, func(t *testing.T) {
			if err := Write(path, []byte(tt.data)); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			fi, _ := os.Stat(path)
			if err != nil || string(got) != tt.data || fi.Mode().Perm() != 0o600 {
				t.Fatalf("%q %v, mode %v", got, err, fi.Mode())
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Fatalf("a temporary file is left: %v", entries)
			}
		})
	}
	if err := Write(filepath.Join(dir, "missing", "x"), nil); err == nil {
		t.Fatal("a write into a missing directory succeeded")
	}
}
