// Package tests holds the end-to-end and interoperability tests: they build
// the real binaries, run them on loopback, and check what they emit with
// independent implementations from npm (tests/interop).
package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	repoRoot string
	binDir   string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Dir(filepath.Dir(file))
	dir, err := os.MkdirTemp("", "hdc-tests-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	if err := ensureNodeModules(); err != nil {
		fmt.Fprintln(os.Stderr, "tests: installing the npm interop packages:", err)
		return 1
	}
	return m.Run()
}

// ensureNodeModules installs tests/interop's locked npm packages when they
// are missing, so `go test ./tests/` works on a fresh clone.
func ensureNodeModules() error {
	interop := filepath.Join(repoRoot, "tests", "interop")
	if _, err := os.Stat(filepath.Join(interop, "node_modules", ".package-lock.json")); err == nil {
		return nil
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	cmd.Dir = interop
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

var builds sync.Map // binary name → *buildOnce

type buildOnce struct {
	once sync.Once
	path string
	err  error
}

// binary builds ./cmd/<name> once per test run and returns its path.
func binary(t testing.TB, name string) string {
	t.Helper()
	return build(t, name, repoRoot, "./cmd/"+name)
}

// build builds package pkg of the module in dir, once per test run, as the
// program name, and returns its path.
func build(t testing.TB, name, dir, pkg string) string {
	t.Helper()
	b, _ := builds.LoadOrStore(name, &buildOnce{})
	bo := b.(*buildOnce)
	bo.once.Do(func() {
		bo.path = filepath.Join(binDir, name)
		cmd := exec.Command("go", "build", "-o", bo.path, pkg)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			bo.err = fmt.Errorf("go build %s in %s: %v\n%s", pkg, dir, err, out)
		}
	})
	if bo.err != nil {
		t.Fatal(bo.err)
	}
	return bo.path
}

// run runs a program with stdin and returns its standard output; a failure
// is returned with the program's standard error.
func runProgram(t testing.TB, stdin []byte, name string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("%s %v: %v: %s", filepath.Base(name), args, err, errOut.Bytes())
	}
	return out.Bytes(), nil
}

// node runs one of the tests/interop scripts.
func node(t testing.TB, stdin []byte, script string, args ...string) ([]byte, error) {
	t.Helper()
	return runProgram(t, stdin, "node", append([]string{filepath.Join(repoRoot, "tests", "interop", script)}, args...)...)
}
