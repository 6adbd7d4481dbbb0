package main

import (
	"bytes"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
)

// envValues are the variables that hdc's flags read when they are not
// given, each with the form of the value the tests set it to: %s is the
// part that must never show, a secret for the ones that hold credentials
// (a database's password, a keeper's key, a client's secret and key,
// credentials in a bucket's URL). The others are here too: a help that
// names a variable this table lacks fails the test.
var envValues = map[string]string{
	"HDC_DATABASE_URL":      "postgres://hdc:%s@db.invalid/hdc",
	"HDC_KEEPER":            "base64key://%s",
	"HDC_CLIENT_SECRET":     "%s",
	"HDC_ENCRYPTION_KEY":    "%s",
	"HDC_AUDIT_CHECKPOINTS": "s3://hdc-audit?region=eu-west-1&token=%s",
	"HDC_BACKEND_INTERNAL":  "https://hdc:%s@backend.invalid:9081",
	"HDC_DATA":              "/srv/%s",
	"HDC_KEY_REGISTRY":      "/etc/hdc/%s.json",
	"HDC_AUDIT_RETENTION":   "%s",
	"HDC_PUBLISHER_CERT":    "/etc/hdc/%s.pem",
	"HDC_PUBLISHER_KEY":     "/etc/hdc/%s-key.pem",
	"HDC_HOP_CA":            "/etc/hdc/%s-ca.pem",
	"HDC_HOP_DIR":           "/etc/hdc/%s",
	"HDC_UPLOAD_MAX_BODY":   "%s",
	"HDC_UPLOAD_LIMIT":      "%s", // hdc up's, read as hdc-backend reads it
	"HDC_BASE_URL":          "https://%s.invalid",
	"HDC_ADMIN_URL":         "https://%s.invalid:9444",
	"HDC_ADMIN_CERT":        "/etc/hdc/%s-operator.pem",
	"HDC_ADMIN_KEY":         "/etc/hdc/%s-operator-key.pem",
	"HDC_ADMIN_CA":          "/etc/hdc/%s-admin-ca.pem",
	"HDC_ADMIN_TIMEOUT":     "%s",
}

// envFlags are the flags that take their value from a variable when they
// are not given: one command for each place that defines one.
var envFlags = []struct {
	cmd, flag, env string
}{
	{"call", "client-secret", "HDC_CLIENT_SECRET"},
	{"call", "key", "HDC_ENCRYPTION_KEY"},
	{"jwe encrypt", "key", "HDC_ENCRYPTION_KEY"},
	{"keys list", "db", "HDC_DATABASE_URL"},
	{"keys list", "data", "HDC_DATA"},
	{"keys list", "keeper", "HDC_KEEPER"},
	{"keys list", "registry", "HDC_KEY_REGISTRY"},
	{"keeper rewrap", "registry", "HDC_KEY_REGISTRY"},
	{"audit verify", "checkpoints", "HDC_AUDIT_CHECKPOINTS"},
	{"audit verify", "retention", "HDC_AUDIT_RETENTION"},
	{"events publish", "backend-internal", "HDC_BACKEND_INTERNAL"},
	{"events publish", "data-dir", "HDC_DATA"},
	{"events publish", "cert", "HDC_PUBLISHER_CERT"},
	{"events publish", "key", "HDC_PUBLISHER_KEY"},
	{"events publish", "ca", "HDC_HOP_CA"},
	{"tls init", "dir", "HDC_HOP_DIR"},
	{"up", "upload-max-body", "HDC_UPLOAD_MAX_BODY"},
	{"clients create", "base-url", "HDC_BASE_URL"},
	{"console", "base-url", "HDC_BASE_URL"},
	{"clients list", "admin", "HDC_ADMIN_URL"},
	{"clients list", "cert", "HDC_ADMIN_CERT"},
	{"clients list", "key", "HDC_ADMIN_KEY"},
	{"clients list", "ca", "HDC_ADMIN_CA"},
	{"clients list", "admin-timeout", "HDC_ADMIN_TIMEOUT"},
}

// secret is the part of env's value that must never show.
func secret(env string) string { return "s3cret-" + strings.ToLower(env) }

// setEnv sets every variable of envValues for the test, and returns their
// values.
func setEnv(t *testing.T) map[string]string {
	t.Helper()
	values := map[string]string{}
	for env, format := range envValues {
		values[env] = fmt.Sprintf(format, secret(env))
		t.Setenv(env, values[env])
	}
	return values
}

// commandPaths returns the path of every command under c, c's own (empty)
// first, as the arguments that name it.
func commandPaths(c *cobra.Command, path []string) [][]string {
	paths := [][]string{path}
	for _, sub := range c.Commands() {
		paths = append(paths, commandPaths(sub, append(slices.Clone(path), sub.Name()))...)
	}
	return paths
}

// help runs hdc's tree, made anew from the environment, with path and
// --help, and returns what it printed.
func help(t *testing.T, path []string) string {
	t.Helper()
	root := cli.NewRoot(commands()...)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append(slices.Clone(path), "--help"))
	if err := root.Execute(); err != nil {
		t.Fatalf("hdc %s --help: %v", strings.Join(path, " "), err)
	}
	return out.String()
}

// envNamed finds the variables a help names for its flags.
var envNamed = regexp.MustCompile(`\(env ([A-Z0-9_]+)`)

// TestHelpNamesVariablesNotTheirValues: no command's --help shows the
// value of a variable its flags read, which may be a credential (a
// terminal's scrollback and a CI log keep it); each flag names its
// variable instead. Every command of the tree main runs is asked, cobra's
// own included.
func TestHelpNamesVariablesNotTheirValues(t *testing.T) {
	setEnv(t)
	tree := cli.NewRoot(commands()...)
	tree.InitDefaultHelpCmd()
	tree.InitDefaultCompletionCmd()
	helps := map[string]string{}
	for _, path := range commandPaths(tree, nil) {
		name := strings.Join(path, " ")
		helps[name] = help(t, path)
		for _, env := range slices.Sorted(maps.Keys(envValues)) {
			if strings.Contains(helps[name], secret(env)) {
				t.Errorf("hdc %s --help shows the value of %s", name, env)
			}
		}
		for _, m := range envNamed.FindAllStringSubmatch(helps[name], -1) {
			if _, ok := envValues[m[1]]; !ok {
				t.Errorf("hdc %s --help names %s, which envValues lacks: its value is not checked", name, m[1])
			}
		}
	}
	for _, f := range envFlags {
		flag := regexp.MustCompile(`(?m)^\s+--` + regexp.QuoteMeta(f.flag) + ` .*\(env ` + regexp.QuoteMeta(f.env) + `\)`)
		if !flag.MatchString(helps[f.cmd]) {
			t.Errorf("hdc %s --help does not name %s for --%s:\n%s", f.cmd, f.env, f.flag, helps[f.cmd])
		}
	}
}

// TestFlagsReadTheirVariables: a flag that is not given is its variable's
// value, at each place that defines such a flag.
func TestFlagsReadTheirVariables(t *testing.T) {
	values := setEnv(t)
	root := cli.NewRoot(commands()...)
	for _, f := range envFlags {
		cmd, _, err := root.Find(strings.Fields(f.cmd))
		if err == nil {
			err = cmd.ParseFlags(nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		flag := cmd.Flag(f.flag)
		if flag == nil {
			t.Fatalf("hdc %s has no --%s", f.cmd, f.flag)
		}
		if got := flag.Value.String(); got != values[f.env] {
			t.Errorf("hdc %s --%s = %q, want %s's %q", f.cmd, f.flag, got, f.env, values[f.env])
		}
	}
}
