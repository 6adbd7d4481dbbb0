package hdc

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/health-data-connect/hdc"

// imports returns, for each package directory of the repository, the
// packages of this module its non-test files import (directories relative
// to the root).
func imports(t *testing.T) map[string][]string {
	t.Helper()
	deps := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if rel, ok := strings.CutPrefix(p, module+"/"); ok {
				deps[dir] = append(deps[dir], rel)
			}
		}
		if _, ok := deps[dir]; !ok {
			deps[dir] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return deps
}

func under(pkg, tree string) bool { return pkg == tree || strings.HasPrefix(pkg, tree+"/") }

// TestImportRules holds the import rules of docs/architecture.md.
func TestImportRules(t *testing.T) {
	deps := imports(t)
	rules := []struct {
		name    string
		applies func(pkg string) bool
		allowed func(dep string) bool
	}{
		{"problems and the leaf helpers import nothing of ours",
			func(p string) bool {
				switch p {
				case "internal/problem", "internal/strictjson", "internal/privatefile", "internal/version":
					return true
				}
				return false
			},
			func(string) bool { return false }},
		{"the contract imports only the client key it carries",
			func(p string) bool { return p == "internal/contract" },
			func(d string) bool { return d == "internal/clientkey" }},
		{"the client key imports only the codec, whose encs it names",
			func(p string) bool { return p == "internal/clientkey" },
			func(d string) bool { return d == "internal/jwe" }},
		{"what both sides share imports neither side",
			func(p string) bool { return under(p, "internal") },
			func(d string) bool { return under(d, "internal") }},
		{"the backend imports nothing of the edge",
			func(p string) bool { return under(p, "backend") },
			func(d string) bool { return !under(d, "caddymodule") && !under(d, "kid-registry") }},
		{"the edge imports nothing of the backend",
			func(p string) bool { return under(p, "caddymodule") || under(p, "kid-registry") },
			func(d string) bool { return !under(d, "backend") }},
		{"the edge's modules ask kid-registry for keys, not a source of its own",
			func(p string) bool { return under(p, "caddymodule") },
			func(d string) bool { return !strings.HasPrefix(d, "kid-registry/") && d != "internal/keeper" }},
		{"cbchmac imports nothing of ours",
			func(p string) bool { return p == "internal/jwe/cbchmac" },
			func(string) bool { return false }},
		{"jwe imports only cbchmac",
			func(p string) bool { return p == "internal/jwe" },
			func(d string) bool { return d == "internal/jwe/cbchmac" }},
		{"h1framing imports only problems",
			func(p string) bool { return p == "caddymodule/h1framing" },
			func(d string) bool { return d == "internal/problem" }},
		{"the store imports only the audit record, its engines only the store and the audit record",
			func(p string) bool {
				return p == "backend/store" || p == "backend/store/sqlite" || p == "backend/store/postgres"
			},
			func(d string) bool { return d == "backend/store" || d == "backend/audit" || d == "internal/clientkey" }},
		{"the refusal windows stand before the trail: only the audit record and the store",
			func(p string) bool { return p == "backend/audit/window" },
			func(d string) bool { return d == "backend/audit" || d == "backend/store" }},
		{"the keeper imports only the private files",
			func(p string) bool { return p == "internal/keeper" },
			func(d string) bool { return d == "internal/privatefile" }},
		{"sealing stands between the store and the keeper: only the store, the audit record and the keeper",
			func(p string) bool { return p == "backend/sealed" },
			func(d string) bool { return d == "backend/store" || d == "backend/audit" || d == "internal/keeper" }},
		{"the checkpoints know only the audit record",
			func(p string) bool { return p == "backend/audit/checkpoint" },
			func(d string) bool { return d == "backend/audit" }},
		{"the FHIR view of the trail knows only the audit record and FHIR's generic pieces, no HTTP",
			func(p string) bool { return p == "backend/audit/fhirview" },
			func(d string) bool { return d == "backend/audit" || d == "backend/fhir" }},
		{"the audit record imports only the contract and the client key, whose kids it names",
			func(p string) bool { return p == "backend/audit" },
			func(d string) bool { return d == "internal/contract" || d == "internal/clientkey" }},
		{"the hdc commands reach the backend through its operator surface, never the server's wiring: " +
			"of the backend, only backend/operator and the packages of what it hands them (the local stack, which runs the server, excepted)",
			func(p string) bool { return under(p, "cmd/hdc") && p != "cmd/hdc/internal/upcmd" },
			func(d string) bool { return !under(d, "backend") || operatorSurface(d) }},
		{"the clients' commands import nothing of the backend, the edge or the operators' and local stack's commands",
			func(p string) bool { return p == "cmd/hdc/internal/clientcmd" },
			func(d string) bool {
				return !under(d, "backend") && !under(d, "caddymodule") && !under(d, "kid-registry") &&
					d != "cmd/hdc/internal/opscmd" && d != "cmd/hdc/internal/upcmd"
			}},
		{"web is plumbing: no domain package but the audit record, whose request fields it reads",
			func(p string) bool { return p == "backend/internal/web" },
			func(d string) bool {
				return d == "internal/contract" || d == "internal/problem" || d == "internal/strictjson" || d == "backend/audit" ||
					d == "internal/clientkey"
			}},
	}
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			checked := 0
			for pkg, ds := range deps {
				if !r.applies(pkg) {
					continue
				}
				checked++
				for _, d := range ds {
					if !r.allowed(d) {
						t.Errorf("%s imports %s", pkg, d)
					}
				}
			}
			if checked == 0 {
				t.Fatal("the rule applies to no package: it is out of date")
			}
		})
	}
}

// operatorSurface reports whether dep is a package of the backend that the
// hdc commands may import: the operator surface, and the packages of the
// services, records and stores it hands them (the audit trail's under
// backend/audit too).
func operatorSurface(dep string) bool {
	switch dep {
	case "backend/operator", "backend/identity", "backend/store", "backend/sealed", "backend/fhir", "backend/webhook":
		return true
	}
	return under(dep, "backend/audit")
}

// TestHealthcheckStandardLibraryOnly holds the rule that the image's health
// probe imports only the standard library, whose import paths have no dot
// in their first element: the probe must stay a small static binary that
// no dependency's update can change.
func TestHealthcheckStandardLibraryOnly(t *testing.T) {
	paths, err := filepath.Glob("deploy/hdc-healthcheck/*.go")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no sources of deploy/hdc-healthcheck (%v): the rule is out of date", err)
	}
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
				t.Errorf("%s imports %s", path, p)
			}
		}
	}
}
