package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestAdminAPIFailsOver: hdc, given the Admin API's backends as a list,
// answers from the one that works when the first refuses connections or
// accepts them and never answers; when none answers, hdc and hdc console
// say so, naming each backend and what it did. The times are logged: the
// issue's figures, not a test's bound.
func TestAdminAPIFailsOver(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	op := s.Person(pki.Operator, "alice@example.org")
	refused, hung := "https://"+testkit.FreeAddr(t), "https://"+testkit.HungAddr(t)
	env := slices.DeleteFunc(slices.Clone(op.Env), func(e string) bool { return strings.HasPrefix(e, "HDC_ADMIN_URL=") })
	run := func(admin string, args ...string) (string, string, error, time.Duration) {
		op.Env = append(slices.Clone(env), "HDC_ADMIN_URL="+admin) // each attempt 2 s, the default
		start := time.Now()
		out, errOut, err := op.HDCRun(args...)
		return out, errOut, err, time.Since(start)
	}
	for _, tt := range []struct{ name, first string }{{"refused", refused}, {"hung", hung}} {
		out, _, err, took := run(tt.first+" "+s.Internal, "whoami")
		if err != nil || !strings.Contains(out, `"alice@example.org"`) {
			t.Fatalf("hdc whoami with the first backend %s: %v, %s", tt.name, err, out)
		}
		t.Logf("hdc whoami, the first of two backends %s: answered in %v", tt.name, took.Round(time.Millisecond))
	}
	for _, args := range [][]string{{"whoami"}, {"console", "--listen", "127.0.0.1:0"}} {
		_, errOut, err, took := run(refused+","+hung, args...)
		for _, want := range []string{refused + ": connection refused", hung + ": no answer within 2s"} {
			if err == nil || !strings.Contains(errOut, want) {
				t.Errorf("hdc %s with no backend answering: %v; it does not say %q:\n%s", args[0], err, want, errOut)
			}
		}
		t.Logf("hdc %s, no backend answering: said so in %v", args[0], took.Round(time.Millisecond))
	}
}
