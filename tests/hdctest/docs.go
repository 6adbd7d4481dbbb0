package hdctest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// DocBlock returns the commands of the first sh block after heading in
// file, a Markdown file of the repository (README.md, docs/deploy.md):
// continuation lines joined, comments and blank lines dropped.
func DocBlock(t *testing.T, file, heading string) []string {
	t.Helper()
	return DocBlocks(t, file, heading)[0]
}

// DocBlocks returns the commands of each sh block of the section of file
// under heading, up to the next heading of its level.
func DocBlocks(t *testing.T, file, heading string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(RepoRoot, filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no %q", file, heading)
	}
	level, _, _ := strings.Cut(heading, " ")
	section, _, _ = strings.Cut(section, "\n"+level+" ")
	var blocks [][]string
	for {
		_, rest, ok := strings.Cut(section, "```sh\n")
		if !ok {
			break
		}
		block, after, _ := strings.Cut(rest, "\n```")
		var cmds []string
		for _, l := range strings.Split(strings.ReplaceAll(block, "\\\n", " "), "\n") {
			if l, _, _ = strings.Cut(l, " # "); strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#") {
				cmds = append(cmds, strings.TrimSpace(l))
			}
		}
		blocks = append(blocks, cmds)
		section = after
	}
	if len(blocks) == 0 {
		t.Fatalf("%s has no sh block under %q", file, heading)
	}
	return blocks
}

// GoEnv pins the Go toolchain's caches, which default to places under
// HOME, so that a test with a HOME of its own builds from the warm ones.
func GoEnv(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOPATH", "GOMODCACHE", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	v := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(v) != 3 {
		t.Fatalf("go env printed %q", out)
	}
	return []string{"GOPATH=" + v[0], "GOMODCACHE=" + v[1], "GOCACHE=" + v[2]}
}

// RunLine runs one command line with bash in the repository, and returns
// its standard output; a failure ends the test with its output.
func RunLine(t *testing.T, line string, env []string) string {
	t.Helper()
	return RunLineIn(t, RepoRoot, line, env)
}

// RunLineIn runs one command line with bash in dir.
func RunLineIn(t *testing.T, dir, line string, env []string) string {
	t.Helper()
	t.Log(line)
	out, err := TryLineIn(dir, line, env)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TryLineIn runs one command line with bash in dir, within five minutes,
// and returns its standard output, or an error with what it printed.
func TryLineIn(dir, line string, env []string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s: %v\n%s%s", line, err, out, stderr.String())
	}
	return string(out), nil
}

// StartBackground runs a long-running command line until the test ends,
// and fails the test if it exits early, with what it wrote, which it
// returns. The line runs in a process group of its own, which the test's
// end kills.
func StartBackground(t *testing.T, dir, line string, env []string) *SyncBuffer {
	t.Helper()
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if t.Failed() {
			t.Logf("%s wrote:\n%s", line, Tail(out.String(), 2000))
		}
	})
	select {
	case <-exited:
		t.Fatalf("%s exited at once:\n%s", line, out.String())
	case <-time.After(2 * time.Second):
	}
	return &out
}
