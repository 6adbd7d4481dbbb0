package opscmd

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAdminFileDiscovery: the operator commands find a running hdc up's
// Admin API in its data directory, unless a flag says otherwise: --admin
// names another, --db opens a database, --direct breaks glass. A file that
// is not hdc up's is an error, never a silent direct mode.
func TestAdminFileDiscovery(t *testing.T) {
	t.Parallel()
	ep := AdminEndpoint{URL: "https://127.0.0.1:9081", Cert: "/d/op.pem", Key: "/d/op-key.pem", CA: "/d/ca.pem"}
	withFile := t.TempDir()
	remove, err := WriteAdminFile(withFile, ep)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(withFile, AdminFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the admin file: %v, mode %v", err, fi.Mode())
	}
	garbled := t.TempDir()
	if err := os.WriteFile(filepath.Join(garbled, AdminFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("cases", func(t *testing.T) { discoverCases(t, ep, withFile, garbled) })
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(withFile, AdminFile)); !os.IsNotExist(err) {
		t.Fatalf("remove left the file: %v", err)
	}
}

func discoverCases(t *testing.T, ep AdminEndpoint, withFile, garbled string) {
	for _, tc := range []struct {
		name    string
		flags   storeFlags
		wantURL string
		wantErr bool
	}{
		{"hdc up's data directory", storeFlags{}, ep.URL, false},
		{"another data directory", storeFlags{}, "", false},
		{"--admin names another API", storeFlags{Admin: adminFlags{URL: "https://b:9081"}}, "https://b:9081", false},
		{"--direct", storeFlags{Admin: adminFlags{Direct: true}}, "", false},
		{"a garbled file", storeFlags{}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := tc.flags
			f.DataDir = withFile
			switch tc.name {
			case "another data directory":
				f.DataDir = t.TempDir()
			case "a garbled file":
				f.DataDir = garbled
			}
			err := f.chooseAdmin()
			if (err != nil) != tc.wantErr || f.Admin.URL != tc.wantURL {
				t.Fatalf("URL %q, error %v; want %q, error %v", f.Admin.URL, err, tc.wantURL, tc.wantErr)
			}
			if tc.wantURL == ep.URL && (f.Admin.Cert != ep.Cert || f.Admin.Key != ep.Key || f.Admin.CA != ep.CA) {
				t.Fatalf("the certificate's files: %+v", f.Admin)
			}
		})
	}
}
