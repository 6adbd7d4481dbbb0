package opscmd

import (
	"strings"
	"testing"
)

// TestConsoleRefusals: hdc console listens on loopback only unless told,
// and needs the Admin API: it never opens the database.
func TestConsoleRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"every interface", []string{"console", "--listen", "0.0.0.0:0"}, "beyond loopback"},
		{"another host", []string{"console", "--listen", "console.example.org:8090"}, "--allow-remote"},
		{"no Admin API", []string{"console", "--listen", "127.0.0.1:0"}, "needs the Admin API"},
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
