package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestOpen: Open creates a SQLite database that is not there, OpenExisting
// and Peek refuse one and create nothing, and both open the one Open made.
func TestOpen(t *testing.T) {
	t.Parallel()
	d := Database{DataDir: t.TempDir(), Keeper: testkit.KeeperURL()}
	for name, open := range map[string]func() error{
		"OpenExisting": func() error { _, err := d.OpenExisting(t.Context()); return err },
		"Peek":         func() error { _, err := d.Peek(t.Context()); return err },
	} {
		if err := open(); !errors.Is(err, ErrNoDatabase) {
			t.Fatalf("%s of no database: %v, want ErrNoDatabase", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(d.DataDir, "hdc.db")); !os.IsNotExist(err) {
		t.Fatalf("a database was created: %v", err)
	}
	st, err := d.Open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	again, err := d.OpenExisting(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	if _, err := (Database{DataDir: d.DataDir}).Open(t.Context()); err == nil || !strings.Contains(err.Error(), "--keeper") {
		t.Fatalf("opened without a keeper: %v", err)
	}
}

// TestDefaults: the keeper is the one named, else hdc up's local key when
// it is in the data directory; the checkpoints are hdc up's when their
// directory is there beside a SQLite database.
func TestDefaults(t *testing.T) {
	t.Parallel()
	d := Database{DataDir: t.TempDir()}
	if got := d.KeeperURL(); got != "" {
		t.Fatalf("KeeperURL without a key file = %q", got)
	}
	if got := d.LocalCheckpoints(); got != "" {
		t.Fatalf("LocalCheckpoints without the directory = %q", got)
	}
	url, err := keeper.CreateKeyFile(filepath.Join(d.DataDir, LocalKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(d.DataDir, CheckpointDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := d.KeeperURL(); got != url {
		t.Fatalf("KeeperURL = %q, want the local key's %q", got, url)
	}
	if got, want := d.LocalCheckpoints(), "file://"+filepath.ToSlash(filepath.Join(d.DataDir, CheckpointDir)); got != want {
		t.Fatalf("LocalCheckpoints = %q, want %q", got, want)
	}
	named := Database{URL: "postgres://db.example/hdc", DataDir: d.DataDir, Keeper: "keyfile:///elsewhere"}
	if named.KeeperURL() != named.Keeper || named.LocalCheckpoints() != "" {
		t.Fatalf("with a keeper and a database named: %q, %q", named.KeeperURL(), named.LocalCheckpoints())
	}
}
