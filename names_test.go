package hdc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOneKeyType holds docs/architecture.md's "one name, one thing" for
// Key: no package that declares a type Key imports another that does, so
// that a reader of one never has two Keys in view (the client's key is
// clientkey.Key; the codec's is jwe.CEK, a registry file's entry
// registryfile.Entry, the Admin API's listed key adminapi.KeyInfo).
func TestOneKeyType(t *testing.T) {
	declares := declaring(t, "Key")
	if len(declares) == 0 {
		t.Fatal("no package declares a type Key: the walk found nothing")
	}
	for pkg, deps := range imports(t) {
		slices.Sort(deps)
		for _, d := range slices.Compact(deps) {
			if declares[pkg] && declares[d] {
				t.Errorf("%s and %s, which it imports, both declare a type Key", pkg, d)
			}
		}
	}
}

// declaring returns the package directories whose non-test files declare
// a type of name.
func declaring(t *testing.T, name string) map[string]bool {
	t.Helper()
	found := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && skipDir(path, d.Name()) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.TYPE {
				for _, s := range g.Specs {
					if s.(*ast.TypeSpec).Name.Name == name {
						found[filepath.ToSlash(filepath.Dir(path))] = true
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
