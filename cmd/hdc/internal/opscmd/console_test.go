package opscmd

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/pki"
)

// TestConsoleRefusals: hdc console listens on loopback only unless told,
// and needs the Admin API: it never opens the database; an --edge-ca it
// cannot read stops it.
func TestConsoleRefusals(t *testing.T) {
	t.Parallel()
	hop := t.TempDir()
	if err := pki.InitDir(hop, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	if _, err := pki.IssueFromDir(hop, pki.Leaf{Role: pki.Operator, Name: operatorName}, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	admin := []string{"--admin", "https://127.0.0.1:9", "--cert", filepath.Join(hop, operatorName+".pem"),
		"--key", filepath.Join(hop, operatorName+"-key.pem"), "--ca", filepath.Join(hop, pki.CAFile)}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"every interface", []string{"console", "--listen", "0.0.0.0:0"}, "beyond loopback"},
		{"another host", []string{"console", "--listen", "console.example.org:8090"}, "--allow-remote"},
		{"no Admin API", []string{"console", "--listen", "127.0.0.1:0"}, "needs the Admin API"},
		{"an edge's authority of no file", append([]string{"console", "--listen", "127.0.0.1:0", "--edge-ca", filepath.Join(hop, "none.pem")}, admin...), "--edge-ca"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := hdc(t, t.TempDir(), tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("hdc %s: %v, want %q", strings.Join(tc.args, " "), err, tc.want)
			}
		})
	}
}
