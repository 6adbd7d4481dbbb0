package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestVersions: every binary names the build it came from, in the same
// words, and the backend's /healthz reports it too.
func TestVersions(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	line := regexp.MustCompile(`^(\S+) (\S+) \(revision (\S+?)(, modified)?, go[0-9.]+\)$`)
	var builds []string
	for _, args := range [][]string{{"hdc", "version"}, {"hdc-edge", "version"}, {"hdc-backend", "--version"}} {
		out, err := hdctest.RunProgram(t, nil, hdctest.Binary(t, args[0]), args[1:]...)
		if err != nil {
			t.Fatal(err)
		}
		first, rest, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		m := line.FindStringSubmatch(first)
		if m == nil || m[1] != args[0] {
			t.Fatalf("%s printed %q", strings.Join(args, " "), out)
		}
		if args[0] == "hdc-edge" && !strings.HasPrefix(rest, "Caddy v2.") {
			t.Fatalf("hdc-edge version does not name Caddy's: %q", out)
		}
		builds = append(builds, m[2]+" "+m[3])
	}
	if builds[0] != builds[1] || builds[1] != builds[2] {
		t.Fatalf("the binaries disagree: %q", builds)
	}
	resp, err := s.InternalClient("").Get(s.Internal + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var health struct{ Status, Version, Revision string }
	if err := json.NewDecoder(resp.Body).Decode(&health); err != nil || health.Status != "ok" || health.Version+" "+health.Revision != builds[0] {
		t.Fatalf("/healthz answered %+v (%v), want version and revision %q", health, err, builds[0])
	}
}
