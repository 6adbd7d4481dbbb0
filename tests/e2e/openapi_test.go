package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestOpenAPILint lints docs/openapi.yaml and docs/admin-openapi.yaml with
// Redocly CLI (npm @redocly/cli, tests/interop) on its recommended rules,
// as docs/redocly.yaml configures them: any error or warning fails.
func TestOpenAPILint(t *testing.T) {
	t.Parallel()
	cli := filepath.Join(hdctest.RepoRoot, "tests", "interop", "node_modules", "@redocly", "cli", "bin", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		t.Fatalf("Redocly CLI is not installed (npm ci --prefix tests/interop, as scripts/test.sh does): %v", err)
	}
	for _, doc := range []string{hdctest.APIDocPath, hdctest.AdminAPIDocPath} {
		t.Run(doc, func(t *testing.T) {
			t.Parallel()
			lint(t, cli, doc)
		})
	}
}

// lint runs Redocly CLI's lint on doc and fails t on any problem.
func lint(t *testing.T, cli, doc string) {
	t.Helper()
	cmd := exec.Command("node", cli, "lint", "--format", "json", "--config", filepath.Join("docs", "redocly.yaml"), doc)
	cmd.Dir = hdctest.RepoRoot
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var report struct {
		Totals   struct{ Errors, Warnings int }
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Message  string `json:"message"`
			Location []struct {
				Pointer string `json:"pointer"`
			} `json:"location"`
		}
	}
	if jerr := json.Unmarshal(out, &report); jerr != nil {
		t.Fatalf("redocly lint: %v, %v\n%s\n%s", err, jerr, out, hdctest.Tail(stderr.String(), 2000))
	}
	for _, p := range report.Problems {
		where := ""
		if len(p.Location) > 0 {
			where = p.Location[0].Pointer
		}
		t.Errorf("%s %s: %s", p.RuleID, where, p.Message)
	}
	if err != nil || report.Totals.Errors+report.Totals.Warnings != 0 {
		t.Fatalf("redocly lint: %v; %d errors, %d warnings", err, report.Totals.Errors, report.Totals.Warnings)
	}
}

// TestOpenAPIExamples: every example of the document matches its schema,
// and every encrypted one opens with the key the document names
// (x-hdc-example-key) to a plaintext that matches the media type's
// x-hdc-plaintext schema.
func TestOpenAPIExamples(t *testing.T) {
	t.Parallel()
	doc := apiDocument(t)
	var key struct{ Kid, Secret string }
	b, _ := json.Marshal(doc.Root["x-hdc-example-key"])
	if err := json.Unmarshal(b, &key); err != nil || key.Secret == "" {
		t.Fatalf("x-hdc-example-key: %s", b)
	}
	open := func(body []byte, compact bool) ([]byte, error) {
		obj, err := hdctest.ParseEnvelope(body, compact)
		if err != nil {
			return nil, err
		}
		return obj.Decrypt([]byte(key.Secret + key.Secret))
	}
	n := 0
	walk(doc.Root, "", func(pointer string, node map[string]any) {
		if _, ok := node["example"]; ok && node["schema"] != nil {
			n++
			if err := doc.Validate(pointer+"/schema", node["example"]); err != nil {
				t.Errorf("%s/example: %v", pointer, err)
			}
		}
		examples, _ := node["examples"].(map[string]any)
		for name := range examples {
			n++
			if err := checkExample(doc, pointer, pointer+"/examples/"+hdctest.EscapePointer(name)+"/value", open); err != nil {
				t.Errorf("%s: example %s: %v", pointer, name, err)
			}
		}
	})
	if n < 50 {
		t.Fatalf("only %d examples found", n)
	}
	t.Logf("%d examples checked", n)
}

// checkExample checks the example at pointer against the media type object
// at media: its schema, and the plaintext schema for what it says.
func checkExample(doc *hdctest.APIDoc, media, pointer string, open hdctest.Opener) error {
	value := doc.At(pointer)
	if err := doc.Validate(media+"/schema", value); err != nil {
		return err
	}
	if doc.At(media+"/x-hdc-plaintext") == nil {
		return nil
	}
	text, compact := "", false
	switch v := value.(type) {
	case string:
		text, compact = v, true
	case map[string]any:
		if _, sealed := v["ciphertext"]; !sealed {
			return doc.ValidateAt(media+"/x-hdc-plaintext", value, "the plain example")
		}
		b, _ := json.Marshal(v)
		text = string(b)
	}
	plaintext, err := open([]byte(text), compact)
	if err != nil {
		return fmt.Errorf("cannot open the envelope: %v", err)
	}
	return doc.CheckJSON(media+"/x-hdc-plaintext", plaintext, "the decrypted example")
}

// walk calls f for every object in v, with its JSON pointer.
func walk(v any, pointer string, f func(string, map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		f(pointer, v)
		for k, child := range v {
			walk(child, pointer+"/"+hdctest.EscapePointer(k), f)
		}
	case []any:
		for i, child := range v {
			walk(child, pointer+"/"+strconv.Itoa(i), f)
		}
	}
}

func apiDocument(t *testing.T) *hdctest.APIDoc {
	t.Helper()
	doc, err := hdctest.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestOpenAPIProblemCodes holds the document's problem catalogue to the
// error table of docs/errors.md: the same codes, each with the statuses the
// table gives it (the catalogue may add one the table's prose explains).
func TestOpenAPIProblemCodes(t *testing.T) {
	t.Parallel()
	doc := apiDocument(t)
	catalogue := map[string][]int{}
	entries, _ := doc.At("/components/schemas/ProblemCatalogue/oneOf").([]any)
	for i := range entries {
		p := fmt.Sprintf("/components/schemas/ProblemCatalogue/oneOf/%d/properties", i)
		code, _ := doc.At(p + "/code/const").(string)
		catalogue[code] = numbers(doc.At(p + "/status/const"))
		if enum, ok := doc.At(p + "/status/enum").([]any); ok {
			catalogue[code] = numbers(enum...)
		}
		if doc.At(p+"/status/minimum") != nil {
			catalogue[code] = nil // any status: edge_error
		}
	}
	table := errorTable(t)
	for code, statuses := range table {
		got, ok := catalogue[code]
		for _, s := range statuses {
			if !ok || (got != nil && !slices.Contains(got, s)) {
				t.Errorf("docs/errors.md gives %s status %d; the document's catalogue %v", code, s, got)
			}
		}
	}
	for code := range catalogue {
		if _, ok := table[code]; !ok {
			t.Errorf("the document lists %s, which the error table of docs/errors.md does not", code)
		}
	}
}

func numbers(vs ...any) []int {
	var out []int
	for _, v := range vs {
		if n, err := strconv.Atoi(fmt.Sprint(v)); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// errorTable returns the public API's rows of the error table of
// docs/errors.md, the rows of the file before its first section: each
// code's statuses. The Admin API's own rows (from "backend (admin)") are
// adminErrorTable's.
func errorTable(t *testing.T) map[string][]int { return errorRows(t, false) }

// adminErrorTable returns the Admin API's own rows of the error table.
func adminErrorTable(t *testing.T) map[string][]int { return errorRows(t, true) }

// errorRows returns the rows of the error table that are the Admin API's
// own, or the others.
func errorRows(t *testing.T, adminRows bool) map[string][]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hdctest.RepoRoot, "docs", "errors.md"))
	if err != nil {
		t.Fatal(err)
	}
	section, ok := strings.CutPrefix(string(b), "# Errors\n")
	if !ok {
		t.Fatal("docs/errors.md does not start with its title, # Errors")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("(?m)^\\| ([0-9]{3}) \\| (`[a-z_]+`(?:, `[a-z_]+`)*) \\| ([^|]+) \\|")
	codes := map[string][]int{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		if (m[3] == "backend (admin)") != adminRows {
			continue
		}
		status, _ := strconv.Atoi(m[1])
		for c := range strings.SplitSeq(m[2], ", ") {
			codes[strings.Trim(c, "`")] = append(codes[strings.Trim(c, "`")], status)
		}
	}
	if len(codes) < 20 && !adminRows || len(codes) < 3 {
		t.Fatalf("the error table of docs/errors.md has %d codes (admin: %v)", len(codes), adminRows)
	}
	return codes
}

// TestAdminOpenAPIProblemCodes: every code of the error table's Admin API
// rows is one docs/admin-openapi.yaml's problems may carry.
func TestAdminOpenAPIProblemCodes(t *testing.T) {
	t.Parallel()
	doc, err := hdctest.AdminOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	enum, _ := doc.At("/components/schemas/Problem/properties/code/enum").([]any)
	for code := range adminErrorTable(t) {
		if !slices.Contains(enum, any(code)) {
			t.Errorf("docs/errors.md gives the Admin API %s; docs/admin-openapi.yaml's problems do not list it", code)
		}
	}
}

// TestOpenAPICheckRefuses shows that the check the end-to-end suite runs
// on every answer bites: an answer with a member, a status, a media type
// or a header the document does not describe is refused, plain or sealed.
func TestOpenAPICheckRefuses(t *testing.T) {
	t.Parallel()
	doc := apiDocument(t)
	const kid, secret = "k_openapi-test", "0123456789abcdef"
	registry := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(registry, []byte(`{"keys":[{"kid":"`+kid+`","client_id":"c1","secret":"`+secret+`","status":"active","created_at":"2026-11-25T00:00:00Z"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	keys := &hdctest.Keyring{Path: registry}
	key, err := jwe.NewKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := jwe.NewKey("fedcba9876543210")
	for _, tc := range refusalCases(func(p string) string { return string(jwe.EncryptResponse(key, kid, []byte(p))) },
		func(p string) string { return string(jwe.EncryptCompact(key, jwe.Protected{Kid: kid}, []byte(p))) },
		func(p string) string { return string(jwe.EncryptResponse(other, kid, []byte(p))) }) {
		t.Run(tc.name, func(t *testing.T) {
			err := doc.Check(tc.answer, keys.Open)
			switch {
			case tc.ok && err != nil:
				t.Fatalf("refused: %v", err)
			case !tc.ok && err == nil:
				t.Fatal("accepted")
			case err != nil:
				t.Logf("refused: %.300s", err)
			}
		})
	}
}

type refusalCase struct {
	name   string
	answer hdctest.Answer
	ok     bool
}

// refusalCases are answers to check, sealed with seal (flattened), compact
// and foreign (flattened, under another key).
func refusalCases(seal, compact, foreign func(string) string) []refusalCase {
	const (
		tokens   = `{"access_token":"eyJh.eyJz.c2ln","expires_in":1800,"refresh_expires_in":2592000,"refresh_token":"hdc_rt_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}`
		extra    = `{"access_token":"eyJh.eyJz.c2ln","expires_in":1800,"refresh_expires_in":2592000,"refresh_token":"hdc_rt_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","scope":"all"}`
		subs     = `{"subscriptions":[{"id":"222a9403-cbe9-4dc1-95aa-651f5bb39b8b","endpoint":"https://example.org/hooks","protocol":"https","event_names":["user.delete"],"status":"active","has_signing_key":false,"created_at":"%s","last_delivery_at":null,"last_delivery_outcome":null}]}`
		notFound = `{"type":"tag:health-data-connect,2026:problem:not_found","title":"Not Found","status":404,"detail":"No such route.","code":"not_found"}`
	)
	problem := func(status int, title, code string) string {
		return fmt.Sprintf(`{"type":"tag:health-data-connect,2026:problem:%s","title":%q,"status":%d,"detail":"x","code":%q}`, code, title, status, code)
	}
	login := func(status int, body string, kv ...string) hdctest.Answer {
		return hdctest.Answer{Method: "POST", Path: hdctest.LoginPath, Status: status, Header: header(kv...), Body: []byte(body)}
	}
	plain := []string{"Content-Type", hdctest.JSONType, "Cache-Control", "no-store"}
	sealed := append([]string{hdctest.JWEHeader, "JWE"}, plain...)
	problemHeader := []string{"Content-Type", hdctest.ProblemType}
	unauthorized := append([]string{"WWW-Authenticate", "Bearer"}, problemHeader...)
	mismatch := strings.Replace(problem(401, "Unauthorized", "missing_token"), "problem:missing_token", "problem:invalid_token", 1)
	return []refusalCase{
		{"tokens, plain", login(200, tokens, plain...), true},
		{"tokens, sealed", login(200, seal(tokens), sealed...), true},
		{"tokens, compact", login(200, compact(tokens), hdctest.JWEHeader, "JWE", "Content-Type", hdctest.CompactType, "Cache-Control", "no-store"), true},
		{"a member the document does not describe", login(200, extra, plain...), false},
		{"a member the document does not describe, sealed", login(200, seal(extra), sealed...), false},
		{"a status the operation does not list", login(201, tokens, plain...), false},
		{"a media type the response does not list", login(200, tokens, "Content-Type", "text/plain", "Cache-Control", "no-store"), false},
		{"an envelope without X-Encryption", login(200, seal(tokens), plain...), false},
		{"plaintext marked X-Encryption", login(200, tokens, sealed...), false},
		{"an envelope under another key", login(200, foreign(tokens), sealed...), false},
		{"a member added to the envelope", login(200, strings.Replace(seal(tokens), `{`, `{"kid":"k",`, 1), sealed...), false},
		{"tokens without Cache-Control", login(200, tokens, "Content-Type", hdctest.JSONType), false},
		{"a 401", login(401, problem(401, "Unauthorized", "invalid_client"), unauthorized...), true},
		{"a 401 without WWW-Authenticate", login(401, problem(401, "Unauthorized", "invalid_client"), problemHeader...), false},
		{"a 401, sealed", login(401, seal(problem(401, "Unauthorized", "invalid_client")), "WWW-Authenticate", "Bearer", hdctest.JWEHeader, "JWE", "Content-Type", hdctest.JSONType), true},
		{"a 401 sealed as a problem+json", login(401, seal(problem(401, "Unauthorized", "invalid_client")), "WWW-Authenticate", "Bearer", hdctest.JWEHeader, "JWE", "Content-Type", hdctest.ProblemType), false},
		{"a code of another status", login(401, problem(401, "Unauthorized", "invalid_json"), unauthorized...), false},
		{"an unknown code", login(401, problem(401, "Unauthorized", "no_such_code"), unauthorized...), false},
		{"a type that is not its code's", login(401, mismatch, unauthorized...), false},
		{"a title that is not its status's", login(401, problem(401, "Forbidden", "invalid_client"), unauthorized...), false},
		{"a problem with a member the document does not describe", login(401, strings.Replace(problem(401, "Unauthorized", "invalid_client"), `{`, `{"instance":"/x",`, 1), unauthorized...), false},
		{"a 429 without Retry-After", login(429, problem(429, "Too Many Requests", "too_many_attempts"), problemHeader...), false},
		{"a 429", login(429, problem(429, "Too Many Requests", "too_many_attempts"), append([]string{"Retry-After", "25"}, problemHeader...)...), true},
		{"a 204", hdctest.Answer{Method: "DELETE", Path: hdctest.SubsPath + "/x", Status: 204, Header: header()}, true},
		{"a 204 with a body", hdctest.Answer{Method: "DELETE", Path: hdctest.SubsPath + "/x", Status: 204, Header: header("Content-Type", hdctest.JSONType), Body: []byte(`{}`)}, false},
		{"a subscription list", hdctest.Answer{Method: "GET", Path: hdctest.SubsPath, Status: 200, Header: header(plain...), Body: []byte(fmt.Sprintf(subs, "2026-11-22T18:40:49.705383Z"))}, true},
		{"a subscription with a malformed time", hdctest.Answer{Method: "GET", Path: hdctest.SubsPath, Status: 200, Header: header(plain...), Body: []byte(fmt.Sprintf(subs, "22 Nov 2026"))}, false},
		{"a Bundle without entries", hdctest.Answer{Method: "GET", Path: hdctest.RetrievePath, Status: 200, Header: header(plain...), Body: []byte(`{"resourceType":"Bundle","id":"b","identifier":{"system":"s","value":"v"},"type":"document","timestamp":"2026-11-22T18:40:55.481Z","entry":[]}`)}, false},
		{"the JWKS without Cache-Control", hdctest.Answer{Method: "GET", Path: "/.well-known/jwks.json", Status: 200, Header: header("Content-Type", hdctest.JSONType), Body: []byte(`{"keys":[]}`)}, false},
		{"the JWKS sealed", hdctest.Answer{Method: "GET", Path: "/.well-known/jwks.json", Status: 200, Header: header(hdctest.JWEHeader, "JWE", "Content-Type", hdctest.JSONType, "Cache-Control", "max-age=60"), Body: []byte(seal(`{"keys":[]}`))}, false},
		{"no such route", hdctest.Answer{Method: "GET", Path: "/no-such-route", Status: 404, Header: header(problemHeader...), Body: []byte(notFound)}, true},
		{"no such route answered 200", hdctest.Answer{Method: "GET", Path: "/no-such-route", Status: 200, Header: header(plain...), Body: []byte(tokens)}, false},
		{"a method the path does not list", hdctest.Answer{Method: "GET", Path: hdctest.LoginPath, Status: 405, Header: header(append([]string{"Allow", "POST"}, problemHeader...)...), Body: []byte(problem(405, "Method Not Allowed", "method_not_allowed"))}, true},
		{"a 405 without Allow", hdctest.Answer{Method: "GET", Path: hdctest.LoginPath, Status: 405, Header: header(problemHeader...), Body: []byte(problem(405, "Method Not Allowed", "method_not_allowed"))}, false},
	}
}

// header builds a header from name, value pairs.
func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// TestDocsLinksStayInside: no link of the README or docs/ points outside
// the repository. Markdown links and autolinks (outside code) must name a
// file of the repository, and their fragment a heading of it; the OpenAPI
// document refers to nothing outside itself (no externalDocs,
// externalValue, contact, license or terms URL, only local $ref) and its
// servers are on loopback.
func TestDocsLinksStayInside(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(hdctest.RepoRoot, "docs", "*.md"))
	files = append(files, filepath.Join(hdctest.RepoRoot, "README.md"))
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range markdownLinks(string(text)) {
			if err := checkLocalLink(f, target); err != nil {
				t.Errorf("%s: link %q: %v", relPath(f), target, err)
			}
		}
	}
	doc := apiDocument(t)
	walk(doc.Root, "", func(pointer string, node map[string]any) {
		for _, k := range []string{"externalDocs", "externalValue", "contact", "license", "termsOfService"} {
			if _, ok := node[k]; ok {
				t.Errorf("%s%s: %s points outside the repository", hdctest.APIDocPath, pointer, k)
			}
		}
		if ref, ok := node["$ref"].(string); ok && !strings.HasPrefix(ref, "#/") {
			t.Errorf("%s%s: $ref %q is not in the document", hdctest.APIDocPath, pointer, ref)
		}
		for _, k := range []string{"description", "summary"} {
			if text, ok := node[k].(string); ok && len(markdownLinks(text)) > 0 {
				t.Errorf("%s%s/%s: links %q", hdctest.APIDocPath, pointer, k, markdownLinks(text))
			}
		}
	})
	servers, _ := doc.Root["servers"].([]any)
	for _, s := range servers {
		if u, _ := s.(map[string]any)["url"].(string); !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Errorf("%s: server %q is not on loopback", hdctest.APIDocPath, u)
		}
	}
}

var (
	fencedCode = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```")
	codeSpan   = regexp.MustCompile("`[^`]*`")
	// linkTarget finds inline links and images, reference definitions,
	// autolinks, and bare URLs that renderers turn into links.
	linkTarget = regexp.MustCompile(`\]\(([^)\s]*)[^)]*\)|(?m)^\s*\[[^\]]+\]:\s*(\S+)|<([a-z][a-z0-9+.-]*:[^>\s]*)>|((?:https?://|www\.)[^\s)>]+)`)
)

// markdownLinks returns the link targets of a Markdown text, outside code.
func markdownLinks(text string) []string {
	text = codeSpan.ReplaceAllString(fencedCode.ReplaceAllString(text, ""), "")
	var targets []string
	for _, m := range linkTarget.FindAllStringSubmatch(text, -1) {
		for _, g := range m[1:] {
			if g != "" {
				targets = append(targets, g)
			}
		}
	}
	return targets
}

// checkLocalLink checks that target, linked from file, is a file of the
// repository (or a heading of file), and its fragment a heading there.
func checkLocalLink(file, target string) error {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "//") || strings.HasPrefix(target, "www.") ||
		regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`).MatchString(target) {
		return fmt.Errorf("points outside the repository")
	}
	path, fragment, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
	}
	rel, err := filepath.Rel(hdctest.RepoRoot, dest)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("points outside the repository")
	}
	text, err := os.ReadFile(dest)
	if err != nil {
		return err
	}
	if fragment != "" && !slices.Contains(headingSlugs(string(text)), fragment) {
		return fmt.Errorf("%s has no heading #%s", rel, fragment)
	}
	return nil
}

// headingSlugs returns the anchors a renderer gives a Markdown text's
// headings: lower case, punctuation dropped, spaces as hyphens.
func headingSlugs(text string) []string {
	var slugs []string
	heading := regexp.MustCompile(`(?m)^#{1,6} +(.+?)\s*$`)
	for _, m := range heading.FindAllStringSubmatch(fencedCode.ReplaceAllString(text, ""), -1) {
		s := strings.Map(func(r rune) rune {
			switch {
			case r == ' ':
				return '-'
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				return r
			}
			return -1
		}, strings.ToLower(m[1]))
		slugs = append(slugs, s)
	}
	return slugs
}

// relPath names a file of the repository for a message.
func relPath(file string) string {
	rel, err := filepath.Rel(hdctest.RepoRoot, file)
	if err != nil {
		return file
	}
	return rel
}
