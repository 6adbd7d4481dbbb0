package blob_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/health-data-connect/hdc/backend/blob"
	"github.com/health-data-connect/hdc/backend/blob/blobtest"
)

func TestDirConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store {
		d, err := blob.NewDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}

func TestDirFileMode(t *testing.T) {
	root := t.TempDir()
	d, err := blob.NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := d.Put(t.Context(), strings.NewReader("hello, blobs"))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(root, key[:2], key)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("blob file: %v, %v", st, err)
	}
}

func TestDirPutFailureLeavesNothing(t *testing.T) {
	root := t.TempDir()
	d, err := blob.NewDir(root)
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
