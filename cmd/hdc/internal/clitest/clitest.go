// Package clitest lets a test binary stand in for hdc, so that the tests of
// hdc's command groups run real hdc processes without a build.
package clitest

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// Main is a test package's TestMain: run with HDC_TEST_MAIN=1 the test
// binary is hdc with the commands cmds returns, so tests can run real hdc
// processes without a build; otherwise it runs the tests.
func Main(m *testing.M, cmds func() []*cobra.Command) {
	if os.Getenv("HDC_TEST_MAIN") == "1" {
		cli.Main(cmds()...)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Result is what a run of the command produced.
type Result struct {
	Stdout, Stderr []byte
	Err            error
}

// KeeperURL is the keeper of the hdc processes the tests run
// (HDC_KEEPER).
var KeeperURL = testkit.KeeperURL()

// Run runs hdc as a separate process with args and stdin, in an
// environment stripped of the HDC_ variables the flags default to but
// HDC_KEEPER, the tests' keeper.
func Run(t testing.TB, stdin []byte, args ...string) Result {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = []string{"HDC_TEST_MAIN=1", "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "HDC_KEEPER=" + KeeperURL, testkit.NoExitSleep}
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return Result{out.Bytes(), errOut.Bytes(), err}
}
