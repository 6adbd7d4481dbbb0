package console

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestConsoleBesideUp: the console command hdc up's guide prints, run as
// printed (on a free port), finds hdc up's data/admin.json and signs the
// browser in as the operator hdc up issued a certificate to, whose
// clients page lists the demo client.
func TestConsoleBesideUp(t *testing.T) {
	hdc := hdctest.Binary(t, "hdc")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	env := []string{"PATH=" + filepath.Dir(hdc) + ":" + os.Getenv("PATH"), "HOME=" + dir, "XDG_CACHE_HOME=" + filepath.Join(dir, "cache")}
	s := &hdctest.Stack{T: t, Dir: dir, Env: env}
	up := s.Start("hdc up", hdc, []string{"up", "--data", data, "--listen", testkit.FreeAddr(t), "--metrics", testkit.FreeAddr(t),
		"--backend-listen", testkit.FreeAddr(t), "--internal-listen", testkit.FreeAddr(t)}, nil)
	var line string
	s.WaitFor("hdc up's guide to name the console", func() bool {
		for _, l := range strings.Split(up.Out.String(), "\n") {
			if _, cmd, ok := strings.Cut(l, "The operator console, in your browser (it prints the URL to open): "); ok {
				line = cmd
			}
		}
		return line != "" && strings.Contains(up.Out.String(), "Ctrl-C")
	})
	fields := strings.Fields(line)
	if len(fields) < 2 || filepath.Base(fields[0]) != "hdc" || fields[len(fields)-1] != "console" {
		t.Fatalf("the guide's console command: %q", line)
	}
	b := hdctest.NewBrowser(t, hdctest.StartConsoleArgs(t, s, append(fields[1:], "--listen", "127.0.0.1:0")...))
	if role := b.Text("#role"); role != "operator" {
		t.Fatalf("the console beside hdc up signed in as %q, %q", b.Text("#me"), role)
	}
	b.Check("")
	b.Open("/clients?workspace=demo")
	if rows := b.Text("table tbody"); !strings.Contains(rows, "demo") || strings.Contains(rows, "No client matches") {
		t.Fatalf("hdc up's demo client is not listed: %s", rows)
	}
	b.Check("")
}
