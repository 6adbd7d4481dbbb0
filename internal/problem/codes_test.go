package problem

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCodesMatchTheErrorTable holds the Code constants to the error table
// of docs/errors.md: every code documented is a constant, and every
// constant is documented.
func TestCodesMatchTheErrorTable(t *testing.T) {
	declared := declaredCodes(t)
	documented := documentedCodes(t)
	for _, c := range declared {
		if !slices.Contains(documented, c) {
			t.Errorf("code %q is not in the error table of docs/errors.md", c)
		}
	}
	for _, c := range documented {
		if !slices.Contains(declared, c) {
			t.Errorf("docs/errors.md documents %q, which is no Code constant", c)
		}
	}
}

// declaredCodes returns the values of the Code constants of codes.go.
func declaredCodes(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || !strings.HasPrefix(vs.Names[0].Name, "Code") {
			return true
		}
		v, err := strconv.Unquote(vs.Values[0].(*ast.BasicLit).Value)
		if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, v)
		return true
	})
	if len(codes) == 0 {
		t.Fatal("no Code constants found")
	}
	return codes
}

// documentedCodes returns the codes of the error table of docs/errors.md:
// the rows "| status | `code`[, `code`…] | from | when |" of the file, whose
// title is "# Errors", before its first section.
func documentedCodes(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	section, ok := strings.CutPrefix(string(doc), "# Errors\n")
	if !ok {
		t.Fatal("docs/errors.md does not start with its title, # Errors")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("^\\| [0-9]{3} \\| (`[a-z_]+`(?:, `[a-z_]+`)*) \\|")
	var codes []string
	for line := range strings.SplitSeq(section, "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			for c := range strings.SplitSeq(m[1], ", ") {
				codes = append(codes, strings.Trim(c, "`"))
			}
		}
	}
	if len(codes) == 0 {
		t.Fatal("the error table of docs/errors.md has no rows")
	}
	return codes
}
