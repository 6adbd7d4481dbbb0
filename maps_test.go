package hdc

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// healthcheckRule is the name of the rule TestHealthcheckStandardLibraryOnly
// holds, as docs/architecture.md states it.
const healthcheckRule = "The health probe imports only the standard library"

// TestPackagesNamed holds docs/architecture.md's table of packages to the
// repository: every directory that holds Go files has its row, by its full
// path, and every row names such a directory, once.
func TestPackagesNamed(t *testing.T) {
	named := tableNames(t, section(t, "docs/architecture.md", "What each package owns"))
	dirs := packageDirs(t)
	compareNames(t, "docs/architecture.md's table of packages", named, dirs)
}

// TestLayoutNamed holds the README's layout table to the repository's top
// level: every directory has its row, and every row names a directory or
// file that is there.
func TestLayoutNamed(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "| path | what lives there |")
	if start < 0 {
		t.Fatal("README.md has no layout table")
	}
	end := strings.Index(text[start:], "\n\n")
	named := tableNames(t, text[start:start+end])
	var top []string
	for _, n := range named {
		if _, err := os.Stat(strings.TrimSuffix(n, "/")); err != nil {
			t.Errorf("README.md's layout names %s: %v", n, err)
		}
		if strings.HasSuffix(n, "/") {
			top = append(top, n)
		}
	}
	var dirs []string
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	ignored := ignoredDirs(t)
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !ignored[e.Name()] {
			dirs = append(dirs, e.Name()+"/")
		}
	}
	compareNames(t, "README.md's layout table", top, dirs)
}

// TestRulesDocumented holds the rules docs/architecture.md states under
// "What may import what" (each bullet's bold lead) to the rules
// architecture_test.go holds, both ways.
func TestRulesDocumented(t *testing.T) {
	lead := regexp.MustCompile(`(?m)^- \*\*([^*]+?)\.?\*\*`)
	var stated []string
	for _, m := range lead.FindAllStringSubmatch(section(t, "docs/architecture.md", "What may import what"), -1) {
		stated = append(stated, m[1])
	}
	held := []string{healthcheckRule}
	for _, r := range slices.Concat(importRules, linkRules) {
		held = append(held, r.name)
	}
	compareNames(t, "the rules docs/architecture.md states", stated, held)
}

// compareNames fails the test for every name of want that got lacks, every
// name of got that want lacks, and every name got holds twice.
func compareNames(t *testing.T, what string, got, want []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, n := range got {
		if seen[n] {
			t.Errorf("%s names %s twice", what, n)
		}
		seen[n] = true
		if !slices.Contains(want, n) {
			t.Errorf("%s names %s, which is not there", what, n)
		}
	}
	for _, n := range want {
		if !seen[n] {
			t.Errorf("%s does not name %s", what, n)
		}
	}
	if len(want) == 0 {
		t.Errorf("%s: nothing to compare with", what)
	}
}

// section returns the text of file under the level-2 heading title, up to
// the next level-2 heading.
func section(t *testing.T, file, title string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	_, rest, ok := strings.Cut(text, "\n## "+title+"\n")
	if !ok {
		t.Fatalf("%s has no section %q", file, title)
	}
	if end := strings.Index(rest, "\n## "); end >= 0 {
		rest = rest[:end]
	}
	return rest
}

// tableNames returns the first code span of the first cell of each body row
// of the Markdown tables in text; a body row without one fails the test.
func tableNames(t *testing.T, text string) []string {
	t.Helper()
	var names []string
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		header := i+1 < len(lines) && strings.HasPrefix(lines[i+1], "|---")
		if !strings.HasPrefix(line, "| ") || header {
			continue
		}
		cell, _, _ := strings.Cut(line[2:], " |")
		_, span, ok := strings.Cut(cell, "`")
		name, _, closed := strings.Cut(span, "`")
		if !ok || !closed {
			t.Errorf("a row names no path in code: %s", line)
			continue
		}
		names = append(names, name)
	}
	return names
}

// packageDirs returns every directory of the repository that holds Go
// files, relative to the root ("." for the root), as the import rules walk
// it.
func packageDirs(t *testing.T) []string {
	t.Helper()
	set := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && skipDir(path, d.Name()) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			set[filepath.ToSlash(filepath.Dir(path))] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	dirs := make([]string, 0, len(set))
	for d := range set {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	return dirs
}

// ignoredDirs returns the top-level directories .gitignore names (a line
// /name/), which a working copy may hold and the repository does not.
func ignoredDirs(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(".gitignore")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if name, ok := strings.CutPrefix(line, "/"); ok && strings.HasSuffix(name, "/") {
			out[strings.TrimSuffix(name, "/")] = true
		}
	}
	return out
}
