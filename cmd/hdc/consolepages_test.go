package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/console"
)

// What of hdc's command tree is no operator's task for the console (issue
// 58, part 3), and no more.
var (
	// notOperatorGroups are hdc's commands that are no operator group: the
	// API clients' commands, the local stack, the console itself, the
	// version, who the commands act as, and cobra's own.
	notOperatorGroups = []string{"call", "jwe", "webhooks", "up", "console", "version", "whoami", "help", "completion"}
	// notInConsole are the operator's commands the console does not do:
	// the certificates made on the operator's own machine (a group), the
	// keeper (a group), and a publisher's tool.
	notInConsole = []string{"tls", "keeper", "events publish"}
	// breakGlassArgs are the arguments with which each command a row of
	// the table calls break-glass (direct mode) runs, but for --admin,
	// which it must refuse.
	breakGlassArgs = map[string][]string{
		"keys import": {"keys.json"},
		"keys wrap":   {"--registry", "keys.json"},
	}
)

// pageRow is a row of docs/console.md's table of the operator's commands:
// the console's routes it names, or that it is break-glass.
type pageRow struct {
	routes     []string
	breakGlass bool
}

var (
	commandRow = regexp.MustCompile("(?m)^\\| `hdc ([a-z ]+)` \\| (.+) \\|$")
	routeOf    = regexp.MustCompile("`((?:GET|POST) /[^`]*)`")
)

// pageTable reads docs/console.md's table of the operator's commands, by
// command ("clients limits set").
func pageTable(t *testing.T) map[string]pageRow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "console.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Every operator command and its page\n")
	if !ok {
		t.Fatal("docs/console.md has no section \"Every operator command and its page\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]pageRow{}
	for _, m := range commandRow.FindAllStringSubmatch(section, -1) {
		row := pageRow{breakGlass: strings.Contains(m[2], "break-glass (direct mode)")}
		for _, r := range routeOf.FindAllStringSubmatch(m[2], -1) {
			row.routes = append(row.routes, r[1])
		}
		if _, dup := rows[m[1]]; dup {
			t.Errorf("docs/console.md's table has hdc %s twice", m[1])
		}
		rows[m[1]] = row
	}
	return rows
}

// operatorCommands returns the path of every command that runs in the
// operator groups of tree, and whether the console leaves it out
// (notInConsole).
func operatorCommands(tree *cobra.Command) map[string]bool {
	out := map[string]bool{}
	var walk func(c *cobra.Command, path string)
	walk = func(c *cobra.Command, path string) {
		if c.Runnable() {
			out[path] = slices.ContainsFunc(notInConsole, func(x string) bool { return path == x || strings.HasPrefix(path, x+" ") })
		}
		for _, sub := range c.Commands() {
			walk(sub, strings.TrimSpace(path+" "+sub.Name()))
		}
	}
	for _, group := range tree.Commands() {
		if !slices.Contains(notOperatorGroups, group.Name()) {
			walk(group, group.Name())
		}
	}
	return out
}

// TestEveryOperatorCommandHasAPage: every command of hdc's operator groups
// (every group but the few that are none, so that a new group counts) has
// its row in docs/console.md's table, whose routes the console serves
// (console.Routes), or is one of the exceptions: the few the issue names,
// and break-glass commands, which refuse --admin. No row names a command
// hdc does not have.
func TestEveryOperatorCommandHasAPage(t *testing.T) {
	rows := pageTable(t)
	served := console.Routes()
	tree := cli.NewRoot(commands()...)
	tree.InitDefaultHelpCmd()
	tree.InitDefaultCompletionCmd()
	cmds := operatorCommands(tree)
	for _, x := range slices.Concat(notOperatorGroups, notInConsole) {
		if _, _, err := tree.Find(strings.Fields(x)); err != nil {
			t.Errorf("the exception %q is no command of hdc's", x)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(cmds)) {
		row, ok := rows[path]
		switch {
		case !ok && !cmds[path]:
			t.Errorf("hdc %s has no page: docs/console.md's table has no row for it", path)
		case row.breakGlass:
			checkBreakGlass(t, path)
		case ok && len(row.routes) == 0:
			t.Errorf("hdc %s: its row names no route of the console", path)
		}
	}
	for path, row := range rows {
		if _, ok := cmds[path]; !ok && !slices.Contains(notInConsole, strings.Fields(path)[0]) {
			if c, _, err := tree.Find(strings.Fields(path)); err != nil || c.CommandPath() != "hdc "+path {
				t.Errorf("docs/console.md's table has hdc %s, which hdc does not have", path)
			}
		}
		for _, rt := range row.routes {
			if !slices.Contains(served, rt) {
				t.Errorf("hdc %s: the console serves no %s", path, rt)
			}
		}
	}
}

// checkBreakGlass fails t unless hdc path refuses --admin: it works on
// this machine's files alone.
func checkBreakGlass(t *testing.T, path string) {
	t.Helper()
	args, ok := breakGlassArgs[path]
	if !ok {
		t.Errorf("hdc %s is break-glass in docs/console.md: give breakGlassArgs its arguments, to check that it refuses --admin", path)
		return
	}
	dir := t.TempDir()
	root := cli.NewRoot(commands()...)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(slices.Concat(strings.Fields(path), args, []string{"--data", dir, "--admin", "https://127.0.0.1:9"}))
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "drop --admin") {
		t.Errorf("hdc %s is break-glass in docs/console.md, yet takes --admin: %v\n%s", path, err, out.String())
	}
}
