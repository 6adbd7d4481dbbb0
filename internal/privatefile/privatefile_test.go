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

func TestCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key")
	if err := Create(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := Create(path, []byte("two")); err == nil {
		t.Fatal("Create replaced a file")
	}
	got, err := Read(path, 10)
	if err != nil || string(got) != "one" {
		t.Fatalf("%q %v", got, err)
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, mode os.FileMode, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct {
		name string
		path string
		max  int64
		ok   bool
	}{
		{"private", file("private", 0o600, "secret"), 6, true},
		{"owner read-only", file("readonly", 0o400, "secret"), 6, true},
		{"group may read", file("group", 0o640, "secret"), 6, false},
		{"others may read", file("others", 0o604, "secret"), 6, false},
		{"too large", file("large", 0o600, "secret!"), 6, false},
		{"a directory", dir, 6, false},
		{"missing", filepath.Join(dir, "missing"), 6, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Read(tt.path, tt.max)
			if (err == nil) != tt.ok {
				t.Fatalf("Read: %v, want ok %v", err, tt.ok)
			}
			if tt.ok && string(got) != "secret" {
				t.Fatalf("Read = %q", got)
			}
		})
	}
}
