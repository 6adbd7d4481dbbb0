package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/health-data-connect/hdc/backend"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestMain runs main instead of the tests when a test starts this binary
// as hdc-backend.
func TestMain(m *testing.M) {
	if os.Getenv("HDC_BACKEND_TEST_MAIN") == "1" {
		os.Args = append([]string{"hdc-backend"}, os.Args[1:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// execute runs the command on args and the environment env, and returns
// what serve was given (serve not called: a zero Config), its output and
// its error.
func execute(t *testing.T, env map[string]string, args ...string) (backend.Config, zapcore.Level, string, error) {
	t.Helper()
	var got backend.Config
	var level zapcore.Level
	cmd := newCommand(func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		func(_ context.Context, cfg backend.Config, l zap.AtomicLevel) error {
			got, level = cfg, l.Level()
			return nil
		})
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return got, level, out.String(), err
}

// TestHelp: --help lists every setting's flag with its environment
// variables, and succeeds.
func TestHelp(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		t.Run(arg, func(t *testing.T) {
			_, _, out, err := execute(t, nil, arg)
			if err != nil {
				t.Fatal(err)
			}
			cfg := backend.DefaultConfig()
			level := zap.NewAtomicLevel()
			for _, s := range cfg.Settings(&level) {
				line := regexp.MustCompile(`(?m)^\s+--` + regexp.QuoteMeta(s.Flag) + ` .*\(env ` +
					regexp.QuoteMeta(strings.Join(s.Env, ", else ")) + `\)`)
				if !line.MatchString(out) {
					t.Errorf("--help does not list --%s with (env %s):\n%s", s.Flag, strings.Join(s.Env, ", else "), out)
				}
			}
			for _, want := range []string{"--version", "(default 30m)", "(default 32MiB)", `(default "127.0.0.1:9080")`} {
				if !strings.Contains(out, want) {
					t.Errorf("--help does not show %s", want)
				}
			}
		})
	}
}

// TestFlagsWinOverEnvironment: a flag given wins over its variable, the
// others are read from the environment.
func TestFlagsWinOverEnvironment(t *testing.T) {
	env := map[string]string{
		"HDC_LISTEN": "127.0.0.1:1", "HDC_DATA": "/env", "HDC_UPLOAD_LIMIT": "not a size",
		"HDC_LOG_LEVEL": "warn", "HDC_INTERNAL_LISTEN_NON_LOOPBACK": "1",
	}
	cfg, level, _, err := execute(t, env, "--listen=127.0.0.1:2", "--upload-limit", "1MiB", "--internal-listen-non-loopback=false")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:2" || cfg.DataDir != "/env" || cfg.UploadLimit != 1<<20 || cfg.InternalListenNonLoopback || level != zapcore.WarnLevel {
		t.Errorf("config %+v, level %v", cfg, level)
	}
}

// TestErrors: hdc-backend reports a configuration error as one line on
// stderr naming what to fix, and exits with status 1.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name string
		env  []string
		args []string
		want string // the line's start, after "hdc-backend: "
	}{
		{"bad variable", []string{"HDC_UPLOAD_LIMIT=big"}, nil, `HDC_UPLOAD_LIMIT: "big" is not a size`},
		{"bad flag", nil, []string{"--upload-limit", "big"}, `--upload-limit: "big" is not a size`},
		{"bad log level", []string{"HDC_LOG_LEVEL=loud"}, nil, `HDC_LOG_LEVEL: "loud" is not a level`},
		{"one dash", nil, []string{"-listen", "127.0.0.1:1"}, "-listen: a long flag takes two dashes: --listen"},
		{"unknown flag", nil, []string{"--no-such-flag"}, "unknown flag: --no-such-flag"},
		{"argument", nil, []string{"serve"}, `unexpected argument "serve"`},
		{"missing hop certificate", []string{"HDC_HOP_CA=" + filepath.Join(dir, "ca.pem")},
			[]string{"--hop-cert", filepath.Join(dir, "backend.pem"), "--hop-key", filepath.Join(dir, "backend-key.pem")},
			"--hop-cert (HDC_HOP_CERT): open " + filepath.Join(dir, "backend.pem") + ": no such file or directory"},
		{"database URL", []string{"HDC_DATABASE_URL=mysql://db/hdc"}, nil, `--db (HDC_DATABASE_URL): opening the store: database URL scheme "mysql" is not supported`},
		{"public beyond loopback", nil, []string{"--listen", "0.0.0.0:9080"}, `--listen (HDC_LISTEN) "0.0.0.0:9080" is not loopback`},
		{"lease", []string{"HDC_WEBHOOK_LEASE=10s"}, nil, "--webhook-lease (HDC_WEBHOOK_LEASE) must be longer than --webhook-timeout (HDC_WEBHOOK_TIMEOUT)"},
		{"address in use", nil, []string{"--listen", busy.Addr().String(), "--internal-listen", "127.0.0.1:0"},
			"--listen (HDC_LISTEN): listen tcp " + busy.Addr().String() + ": bind: address already in use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runMain(t, dir, tt.env, tt.args...)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			if code != 1 || stdout != "" || !strings.HasPrefix(last, "hdc-backend: "+tt.want) {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 1 and the line hdc-backend: %s…", code, stdout, stderr, tt.want)
			}
			// The backend logs from its start, after the settings are read:
			// only the address in use comes after log lines.
			if len(lines) != 1 && tt.name != "address in use" {
				t.Errorf("stderr of %d lines:\n%s", len(lines), stderr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	stdout, stderr, code := runMain(t, t.TempDir(), []string{"HDC_UPLOAD_LIMIT=big"}, "--version")
	if code != 0 || stderr != "" || !regexp.MustCompile(`^hdc-backend \S+ \(revision `).MatchString(stdout) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// runMain runs main in a process of its own, with only env (and a data
// directory under dir) in its environment.
func runMain(t *testing.T, dir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append([]string{"HDC_BACKEND_TEST_MAIN=1", "HOME=" + dir, "HDC_DATA=" + filepath.Join(dir, "data"),
		"AWS_EC2_METADATA_DISABLED=true", "HDC_KEEPER=" + testkit.KeeperURL(), testkit.NoExitSleep}, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}
