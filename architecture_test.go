package hdc

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
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
		if d.IsDir() && skipDir(path, d.Name()) {
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

// skipDir reports whether the walk of the repository's packages skips the
// directory at path: a hidden one, installed npm packages, test data.
func skipDir(path, name string) bool {
	return strings.HasPrefix(name, ".") && path != "." || name == "node_modules" || name == "testdata"
}

func under(pkg, tree string) bool { return pkg == tree || strings.HasPrefix(pkg, tree+"/") }

// importRule is a rule of docs/architecture.md's "What may import what":
// every package it applies to imports, of this module, only what it
// allows. Its name is the rule's bold lead in the doc.
type importRule struct {
	name    string
	applies func(pkg string) bool
	allowed func(dep string) bool
}

func is(pkgs ...string) func(string) bool {
	return func(p string) bool { return slices.Contains(pkgs, p) }
}

func nothing(string) bool { return false }

// importRules are the rules TestImportRules holds.
var importRules = []importRule{
	{"The leaves import nothing of ours",
		is("internal/problem", "internal/strictjson", "internal/privatefile", "internal/version", "internal/pyjson",
			"internal/jwe/cbchmac", "internal/redact", "internal/duration"),
		nothing},
	{"The contract imports only the client key", is("internal/contract"), is("internal/clientkey")},
	{"The client key imports only the codec", is("internal/clientkey"), is("internal/jwe")},
	{"The codec imports only its cipher", is("internal/jwe"), is("internal/jwe/cbchmac")},
	{"What both sides share imports neither side",
		func(p string) bool { return under(p, "internal") },
		func(d string) bool { return under(d, "internal") }},
	{"The backend imports nothing of the edge",
		func(p string) bool { return under(p, "backend") && p != "backend/keyadmin/registryadmin" },
		func(d string) bool { return !under(d, "caddymodule") && !under(d, "kid-registry") }},
	{"A registry file's key administration imports of the edge only the file",
		is("backend/keyadmin/registryadmin"),
		func(d string) bool {
			return !under(d, "caddymodule") && (!under(d, "kid-registry") || d == "kid-registry/registryfile")
		}},
	{"The edge imports nothing of the backend",
		func(p string) bool { return under(p, "caddymodule") || under(p, "kid-registry") },
		func(d string) bool { return !under(d, "backend") }},
	{"The edge's modules ask kid-registry for keys",
		func(p string) bool { return under(p, "caddymodule") && p != "caddymodule/edge/edgetest" },
		func(d string) bool { return !strings.HasPrefix(d, "kid-registry/") && d != "internal/keeper" }},
	{"What the modules share imports no module",
		is("caddymodule/edge"),
		func(d string) bool {
			return !under(d, "caddymodule") || slices.Contains([]string{"caddymodule/tokenauth", "caddymodule/ratelimit", "caddymodule/spool"}, d)
		}},
	{"The key sources know nothing of Caddy's modules",
		func(p string) bool { return under(p, "kid-registry") },
		func(d string) bool { return under(d, "kid-registry") || under(d, "internal") }},
	{"The framing check imports only problems", is("caddymodule/h1framing"), is("internal/problem")},
	{"The hop's client imports only the contract, problems and the redaction",
		is("internal/hopclient"), is("internal/contract", "internal/problem", "internal/redact")},
	{"The store and its engines import only the store, the audit record, the client key, the contract and telemetry",
		is("backend/store", "backend/store/sqlite", "backend/store/postgres"),
		is("backend/store", "backend/audit", "internal/clientkey", "internal/contract", "internal/telemetry")},
	{"The refusal windows import only the audit record and the store",
		is("backend/audit/window"), is("backend/audit", "backend/store")},
	{"The keeper imports only the private files and the redaction", is("internal/keeper"), is("internal/privatefile", "internal/redact")},
	{"Sealing stands between the store and the keeper",
		is("backend/sealed"), is("backend/store", "backend/audit", "internal/keeper")},
	{"The checkpoints know only the audit record", is("backend/audit/checkpoint"), is("backend/audit", "internal/redact", "backend/internal/s3url")},
	{"The FHIR view of the trail knows no HTTP", is("backend/audit/fhirview"), is("backend/audit", "backend/fhir")},
	{"The trail's reading knows the store and the trail's record, view and checkpoints",
		is("backend/audit/trail"),
		is("backend/store", "backend/audit", "backend/audit/fhirview", "backend/audit/checkpoint",
			"internal/contract", "internal/clientkey", "internal/problem", "internal/redact")},
	{"The audit record imports only the contract and the client key",
		is("backend/audit"), is("internal/contract", "internal/clientkey")},
	{"Web is plumbing",
		is("backend/internal/web"),
		is("internal/contract", "internal/problem", "internal/strictjson", "internal/clientkey", "internal/telemetry",
			"backend/audit", "backend/store")},
	{"The hdc commands reach the backend through its operator surface",
		func(p string) bool { return under(p, "cmd/hdc") && p != "cmd/hdc/internal/upcmd" },
		func(d string) bool { return !under(d, "backend") || operatorSurface(d) }},
	{"The Admin API's declaration imports only what both sides share",
		is("backend/admin/adminapi"), is("internal/contract", "internal/clientkey", "internal/problem")},
	{"The Admin API's client knows only the declaration",
		is("backend/admin/adminclient"), is("backend/admin/adminapi", "internal/contract", "internal/problem", "internal/hopclient")},
	{"The console speaks only the Admin API",
		func(p string) bool { return under(p, "console") },
		is("backend/admin/adminapi", "backend/admin/adminclient", "backend/audit", "backend/audit/fhirview",
			"internal/apiclient", "internal/clientkey", "internal/contract", "internal/problem")},
	{"The trial's S3 store imports nothing of ours", is("cmd/hdc-s3"), nothing},
	{"The clients' commands import nothing of the backend or the edge",
		is("cmd/hdc/internal/clientcmd"),
		func(d string) bool {
			return !under(d, "backend") && !under(d, "caddymodule") && !under(d, "kid-registry") &&
				d != "cmd/hdc/internal/opscmd" && d != "cmd/hdc/internal/upcmd"
		}},
}

// TestImportRules holds the import rules of docs/architecture.md.
func TestImportRules(t *testing.T) {
	deps := imports(t)
	for _, r := range importRules {
		t.Run(r.name, func(t *testing.T) {
			holdRule(t, r, deps, "imports", func(pkg string) []string { return deps[pkg] })
		})
	}
}

// linkRules are rules of docs/architecture.md's "What may import what" on
// what a package links: every package of ours it imports, and theirs, to
// the end.
var linkRules = []importRule{
	{"The operator's commands link none of the server",
		is("cmd/hdc/internal/opscmd", "cmd/hdc/internal/cli", "console"),
		func(d string) bool { return d != "backend" }},
}

// TestLinkRules holds the rules of linkRules.
func TestLinkRules(t *testing.T) {
	deps := imports(t)
	for _, r := range linkRules {
		t.Run(r.name, func(t *testing.T) {
			holdRule(t, r, deps, "links", func(pkg string) []string { return linked(deps, pkg) })
		})
	}
}

// holdRule fails t for every package r applies to that imports (or links:
// verb, as depsOf says) a package r does not allow, and when r applies to
// none.
func holdRule(t *testing.T, r importRule, deps map[string][]string, verb string, depsOf func(pkg string) []string) {
	t.Helper()
	checked := 0
	for pkg := range deps {
		if !r.applies(pkg) {
			continue
		}
		checked++
		for _, d := range depsOf(pkg) {
			if !r.allowed(d) {
				t.Errorf("%s %s %s", pkg, verb, d)
			}
		}
	}
	if checked == 0 {
		t.Fatal("the rule applies to no package: it is out of date")
	}
}

// linked returns the packages of ours that pkg links: those it imports,
// and theirs, to the end, once each.
func linked(deps map[string][]string, pkg string) []string {
	seen := map[string]bool{}
	var out []string
	next := slices.Clone(deps[pkg])
	for len(next) > 0 {
		d := next[len(next)-1]
		next = next[:len(next)-1]
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
			next = append(next, deps[d]...)
		}
	}
	return out
}

// operatorSurface reports whether dep is a package of the backend that the
// hdc commands may import: the openers of the stores (backend/storage),
// the packages of the services, records and stores direct mode runs (the
// audit trail's under backend/audit too, a registry file's keys), and the
// Admin API: its
// declaration, which the commands ask, its service, run in place in
// direct mode, and its client.
func operatorSurface(dep string) bool {
	switch dep {
	case "backend/storage", "backend/identity", "backend/keyadmin", "backend/keyadmin/registryadmin", "backend/store",
		"backend/sealed", "backend/fhir", "backend/webhook", "backend/admin", "backend/admin/adminapi", "backend/admin/adminclient":
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
