package blob

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func TestDir(t *testing.T) {
	root := t.TempDir()
	d, err := NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	const content = "hello, blobs"
	sum := sha256.Sum256([]byte(content))
	want := hex.EncodeToString(sum[:])
	for range 2 { // the second Put finds the blob in place
		key, size, err := d.Put(t.Context(), strings.NewReader(content))
		if err != nil || key != want || size != int64(len(content)) {
			t.Fatalf("Put = %q, %d, %v; want %q, %d", key, size, err, want, len(content))
		}
	}
	rc, err := d.Open(t.Context(), want)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != content {
		t.Fatalf("Open read %q", got)
	}
	if st, err := os.Stat(filepath.Join(root, want[:2], want)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("blob file: %v, %v", st, err)
	}
	for _, key := range []string{"", "../../etc/passwd", strings.ToUpper(want), want[:63] + "0"} {
		if _, err := d.Open(t.Context(), key); !errors.Is(err, ErrNotFound) {
			t.Errorf("Open(%q) = %v, want ErrNotFound", key, err)
		}
	}
}

func TestPutFailureLeavesNothing(t *testing.T) {
	root := t.TempDir()
	d, err := NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	_, _, err = d.Put(t.Context(), io.MultiReader(strings.NewReader("partial"), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) {
		t.Fatalf("Put = %v, want the reader's error", err)
	}
	entries, _ := os.ReadDir(root)
	tmp, _ := os.ReadDir(filepath.Join(root, "tmp"))
	if len(entries) != 1 || len(tmp) != 0 {
		t.Fatalf("after a failed Put: root %v, tmp %v", entries, tmp)
	}
}
