package main

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// TestMain lets the test binary stand in for hdc: run with HDC_TEST_MAIN=1 it
// is the command itself, so tests can run real hdc processes without a build.
func TestMain(m *testing.M) {
	if os.Getenv("HDC_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// hdcResult is what a run of the command produced.
type hdcResult struct {
	stdout, stderr []byte
	err            error
}

// testKeeperURL is the keeper of the hdc processes the tests run
// (HDC_KEEPER).
var testKeeperURL = testkit.KeeperURL()

// testSealer returns a sealer over the tests' keeper, for the registry
// files the hdc processes write.
func testSealer(t testing.TB) *registryfile.Sealer {
	t.Helper()
	k, err := keeper.Open(t.Context(), testKeeperURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return registryfile.NewSealer(k)
}

// runHDC runs hdc as a separate process with args and stdin, in an
// environment stripped of the HDC_ variables the flags default to but
// HDC_KEEPER, the tests' keeper.
func runHDC(t testing.TB, stdin []byte, args ...string) hdcResult {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = []string{"HDC_TEST_MAIN=1", "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "HDC_KEEPER=" + testKeeperURL, testkit.NoExitSleep}
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return hdcResult{out.Bytes(), errOut.Bytes(), err}
}
