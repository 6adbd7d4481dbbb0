// Package hdctest is the harness of the end-to-end test packages under
// tests/: it builds the real programs once per run (the image's, with
// deploy/build.sh), starts stacks of them on loopback, each on its own
// ports and data so that tests run side by side, speaks the API through
// the edge as a client would, operates the stack with the hdc CLI, and
// checks what comes back: every answer against docs/openapi.yaml, every
// log line for the credentials the test handled.
package hdctest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
)

// BinEnv names a directory the test packages of one run share their
// programs in (scripts/test.sh sets it): the first package to need a
// program builds it there, and the others take it.
const BinEnv = "HDC_TEST_BIN"

// ImagePrograms are the programs deploy/build.sh builds, the container
// image's; the tests run these very binaries.
var ImagePrograms = []string{"hdc", "hdc-backend", "hdc-edge", "hdc-healthcheck"}

// tools are the other programs the tests run: package, the directory of
// its module relative to the repository, and build tags.
var tools = map[string]struct{ pkg, module, tags string }{
	"hdc-bench":    {"./cmd/hdc-bench", ".", ""},
	"gojoseclient": {"./tests/gojoseclient", ".", ""},
	"jwxclient":    {".", "tests/jwxclient", ""},
	"jwxclient-v2": {"./v2", "tests/jwxclient", ""},
	"localkms":     {".", "tests/localkms", ""},
	"promcheck":    {".", "tests/promcheck", ""},
	// promtool at the version tests/promcheck's go.mod pins (its tool),
	// without the service discoveries, which it does not need here:
	// Prometheus's own build tag, several minutes less to build.
	"promtool": {"github.com/prometheus/prometheus/cmd/promtool", "tests/promcheck", "remove_all_sd"},
}

var (
	// RepoRoot is the repository's root directory.
	RepoRoot string
	// binDir holds the programs: those of BinEnv, or a directory of this
	// test process's own that they are built into as they are needed.
	binDir string
)

// Main runs a test package of tests/: it finds the repository, takes the
// programs of BinEnv or builds its own as the tests ask for them, and
// installs tests/interop's npm packages when they are missing. A test
// package's TestMain calls it.
func Main(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests:", err)
		return 1
	}
	RepoRoot = root
	if dir := os.Getenv(BinEnv); dir != "" {
		binDir = dir
	} else {
		dir, err := os.MkdirTemp("", "hdc-tests-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		binDir = dir
	}
	if err := ensureNodeModules(); err != nil {
		fmt.Fprintln(os.Stderr, "tests: installing the npm interop packages:", err)
		return 1
	}
	return m.Run()
}

// moduleRoot returns the root of the module the test package is in: the
// nearest directory above the working directory, where go test runs a
// package's tests, that holds a go.mod. Not runtime.Caller's file: under
// -trimpath, which the test command builds with so that a fresh clone
// reuses the build cache, that is an import path, not a directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// ensureNodeModules installs tests/interop's locked npm packages when they
// are missing, so that `go test ./tests/...` works on a fresh clone; the
// test packages running side by side install them once between them.
func ensureNodeModules() error {
	interop := filepath.Join(RepoRoot, "tests", "interop")
	return locked(filepath.Join(interop, "node_modules.lock"), func() error {
		if _, err := os.Stat(filepath.Join(interop, "node_modules", ".package-lock.json")); err == nil {
			return nil
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
		cmd.Dir = interop
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		return cmd.Run()
	})
}

// locked runs fn holding an exclusive lock on the file lockPath, which
// other test processes of the run take too.
func locked(lockPath string, fn func() error) error {
	lock, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	return fn()
}

// buildImage runs deploy/build.sh, the build the Containerfile runs, into
// the directory dir.
func buildImage(dir string) error {
	out, err := exec.Command("sh", filepath.Join(RepoRoot, "deploy", "build.sh"), dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("deploy/build.sh: %v\n%s", err, out)
	}
	return nil
}

// buildTool builds one of tools as dst, with deploy/build.sh's settings,
// so that the packages it shares with the image's programs compile once.
func buildTool(name, dst string) error {
	tool := tools[name]
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-tags="+tool.tags, "-o", dst, tool.pkg)
	cmd.Dir = filepath.Join(RepoRoot, filepath.FromSlash(tool.module))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s in %s: %v\n%s", tool.pkg, tool.module, err, out)
	}
	return nil
}

var builds sync.Map // binDir's entry ("image" or a tool's name) → *buildOnce

type buildOnce struct {
	once sync.Once
	err  error
}

// ImageBinaries returns the directory of the programs deploy/build.sh
// built, building them first if this run has not.
func ImageBinaries(t testing.TB) string {
	t.Helper()
	ensure(t, "image", buildImage)
	return filepath.Join(binDir, "image")
}

// Binary returns the path of the program name, one of ImagePrograms or
// of the tests' own tools, building it first if this run has not.
func Binary(t testing.TB, name string) string {
	t.Helper()
	if slices.Contains(ImagePrograms, name) {
		return filepath.Join(ImageBinaries(t), name)
	}
	tool, ok := tools[name]
	if !ok {
		t.Fatalf("no program %q to build", name)
	}
	if tool.module != "." {
		return cachedTool(t, name)
	}
	ensure(t, name, func(dst string) error { return buildTool(name, dst) })
	return filepath.Join(binDir, name)
}

// ensure builds binDir's entry once per run: once per test process, and
// under a lock on the entry in binDir, so that the test processes sharing
// BinEnv build it once between them.
func ensure(t testing.TB, entry string, build func(dst string) error) {
	t.Helper()
	b, _ := builds.LoadOrStore(entry, &buildOnce{})
	bo := b.(*buildOnce)
	bo.once.Do(func() { bo.err = buildLocked(filepath.Join(binDir, entry), build) })
	if bo.err != nil {
		t.Fatal(bo.err)
	}
}

// buildLocked builds path, unless it exists, holding the lock on
// path.lock meanwhile; build writes to a temporary name that is then
// renamed, so that path is whole or missing.
func buildLocked(path string, build func(dst string) error) error {
	return locked(path+".lock", func() error {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		tmp := fmt.Sprintf("%s.tmp%d", path, os.Getpid())
		if err := build(tmp); err != nil {
			os.RemoveAll(tmp)
			return err
		}
		return os.Rename(tmp, path)
	})
}

// RunProgram runs a program with stdin and returns its standard output; a
// failure is returned with the program's standard error.
func RunProgram(t testing.TB, stdin []byte, name string, args ...string) ([]byte, error) {
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
