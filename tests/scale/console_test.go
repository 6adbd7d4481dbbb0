package scale

import (
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestConsoleOnFleet: the operator console in headless Chromium on a
// fleet of two backends over PostgreSQL and two edges. alice's console
// speaks to backend 2's Admin API while her client's request goes through
// edge 1 to either backend: the fleet page shows both backends ready and
// both edges following the key plane, and her tasks (ConsoleTasks) pass
// as on hdc up; bob's console offers no change.
func TestConsoleOnFleet(t *testing.T) {
	t.Parallel() // it times nothing: it runs beside the others that time nothing, after those that do
	c := startCluster(t)
	c.people(t)
	a := c.person(t, alice, 1)
	a.Internal = c.backends[1].internal
	b := hdctest.NewBrowser(t, hdctest.StartConsole(t, a, alice))
	testkit.Eventually(t, 3*contract.EdgeReportEvery, "the fleet page to show 2 backends ready and 2 edges", func() bool {
		b.Open("/fleet")
		return strings.HasPrefix(b.Text(".summary"), "2 of 2 backends ready; 2 edges, 0 behind")
	})
	b.Check("")
	client := hdctest.ConsoleTasks(t, b, a, "console-fleet", false)

	bb := c.person(t, bob, 0)
	bb.Internal = c.backends[0].internal
	auditor := hdctest.NewBrowser(t, hdctest.StartConsole(t, bb, bob))
	for _, path := range []string{"/fleet", "/clients/" + client, "/audit?agent=" + alice} {
		auditor.Open(path)
		if got := auditor.Changes(); len(got) != 0 {
			t.Errorf("%s shows bob changes: %v", path, got)
		}
		auditor.Check("")
	}
}
