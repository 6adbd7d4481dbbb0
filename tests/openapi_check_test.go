package tests

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// The end-to-end suite checks every answer the edge gives it against
// docs/openapi.yaml: status, headers, body, and, for an encrypted answer,
// the decrypted content. The schemas are validated by a JSON Schema 2020-12
// validator (santhosh-tekuri/jsonschema, the dialect of OpenAPI 3.1); this
// file only finds, in the document, the schemas an answer must satisfy:
//
//   - a listed path and method: the operation's response for the status
//     (exact, then NXX, then default); its required headers must be there
//     and every header it describes must match its schema; the body's media
//     type must be one of its content's, and the body must match that
//     media type's schema;
//   - an encrypted answer (X-Encryption: JWE): its media type must have an
//     x-hdc-plaintext schema, and the content, decrypted with the key its
//     protected header names, must match it; a plain answer must match its
//     media type's x-hdc-plaintext schema too, so that an envelope without
//     X-Encryption, or a plain answer where an envelope belongs, fails;
//   - a listed path with a method it does not list: a Problem, and a 405
//     must name the allowed methods in Allow;
//   - a path the document does not list: components.responses.NotFound,
//     with status 404.
//
// What is not checked, by rule: answers of anything but an edge
// (answerCheck checks the addresses of the edges it is given): the
// backend's internal listener (readiness, metrics, events, its JWKS), the
// backend's public listener reached without an edge (the tests of the
// backend alone, the forged replays of the hardening tests) and the edge's
// admin API are not the public API. Answers read from raw connections (the
// framing and idle-body hardening tests), which those tests check with
// testkit.WantProblem, and answers the hdc CLI receives (hdc call in
// call_test.go, up_test.go, readme_test.go), whose output the tests read,
// do not pass through an http.Client of the tests. (The login poll of
// readme_test.go's production walkthrough, with http.Post, is not wired
// yet: checkedClient does it in one line.)

// apiDocPath is the document, relative to the repository's root.
const apiDocPath = "docs/openapi.yaml"

// docURL names the document for the schema compiler.
const docURL = "file:///openapi.json"

// apiDoc is the OpenAPI document, its schemas compiled on first use.
type apiDoc struct {
	root     map[string]any
	compiler *jsonschema.Compiler
	paths    []pathTemplate

	mu      sync.Mutex
	schemas map[string]*jsonschema.Schema // by JSON pointer
}

// pathTemplate is a path of the document and the pattern it matches.
type pathTemplate struct {
	pointer string
	re      *regexp.Regexp
}

// openAPI is the repository's document, read once.
var openAPI = sync.OnceValues(func() (*apiDoc, error) {
	return loadAPIDoc(filepath.Join(repoRoot, apiDocPath))
})

// loadAPIDoc reads an OpenAPI document in YAML.
func loadAPIDoc(path string) (*apiDoc, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	root, err := yamlToJSON(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	doc, ok := root.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not an object", path)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.AssertContent()
	c.RegisterContentEncoding(&jsonschema.Decoder{Name: "base64url", Decode: decodeBase64URL})
	if err := c.AddResource(docURL, doc); err != nil {
		return nil, err
	}
	d := &apiDoc{root: doc, compiler: c, schemas: map[string]*jsonschema.Schema{}}
	paths, _ := doc["paths"].(map[string]any)
	for p := range paths {
		re := regexp.QuoteMeta(p)
		re = regexp.MustCompile(`\\\{[^/]+\\\}`).ReplaceAllString(re, `[^/]+`)
		d.paths = append(d.paths, pathTemplate{pointer: "/paths/" + escapePointer(p), re: regexp.MustCompile("^" + re + "$")})
	}
	return d, nil
}

// yamlToJSON decodes YAML into the values encoding/json would give for
// the same document, numbers as json.Number, as the validator wants them.
func yamlToJSON(text []byte) (any, error) {
	var v any
	if err := yaml.Unmarshal(text, &v); err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

// escapePointer escapes a JSON pointer token (RFC 6901).
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// at returns the value at a JSON pointer of the document, nil if none.
func (d *apiDoc) at(pointer string) any {
	var v any = d.root
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch n := v.(type) {
		case map[string]any:
			v = n[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return nil
			}
			v = n[i]
		default:
			return nil
		}
	}
	return v
}

// object returns the object at pointer, following Reference Objects, and
// the pointer it was found at.
func (d *apiDoc) object(pointer string) (map[string]any, string) {
	for range 10 {
		m, _ := d.at(pointer).(map[string]any)
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return m, pointer
		}
		pointer = strings.TrimPrefix(ref, "#")
	}
	return nil, pointer
}

// schema compiles the schema at pointer once.
func (d *apiDoc) schema(pointer string) (*jsonschema.Schema, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.schemas[pointer]; ok {
		return s, nil
	}
	s, err := d.compiler.Compile(docURL + "#" + pointer)
	if err != nil {
		return nil, err
	}
	d.schemas[pointer] = s
	return s, nil
}

// validate checks v against the schema at pointer.
func (d *apiDoc) validate(pointer string, v any) error {
	s, err := d.schema(pointer)
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// answer is an HTTP answer, read whole, and the request it answers.
type answer struct {
	method, path string
	status       int
	header       http.Header
	body         []byte
}

func (a answer) String() string { return fmt.Sprintf("%s %s → %d", a.method, a.path, a.status) }

// opener decrypts an encrypted answer's body (compact or flattened JSON).
type opener func(body []byte, compact bool) ([]byte, error)

// check validates a against the document; open decrypts encrypted bodies.
func (d *apiDoc) check(a answer, open opener) error {
	pathPtr := ""
	for _, p := range d.paths {
		if p.re.MatchString(a.path) {
			pathPtr = p.pointer
		}
	}
	if pathPtr == "" {
		if a.status != http.StatusNotFound {
			return fmt.Errorf("a path the document does not list must be answered 404, not %d", a.status)
		}
		return d.checkResponse(a, "/components/responses/NotFound", open)
	}
	opPtr := pathPtr + "/" + strings.ToLower(a.method)
	if d.at(opPtr) == nil {
		return d.checkUnlisted(a, open)
	}
	respPtr, err := d.responseFor(opPtr, a.status)
	if err != nil {
		return err
	}
	return d.checkResponse(a, respPtr, open)
}

// responseFor returns the pointer of the operation's response for status.
func (d *apiDoc) responseFor(opPtr string, status int) (string, error) {
	responses, _ := d.at(opPtr + "/responses").(map[string]any)
	for _, key := range []string{strconv.Itoa(status), strconv.Itoa(status/100) + "XX", "default"} {
		if _, ok := responses[key]; ok {
			return opPtr + "/responses/" + key, nil
		}
	}
	return "", fmt.Errorf("status %d is not documented for this operation", status)
}

// checkUnlisted checks the answer to a method the path does not list: a
// problem, plain or sealed, and a 405 names what the path allows.
func (d *apiDoc) checkUnlisted(a answer, open opener) error {
	if a.status < 400 {
		return fmt.Errorf("a method the path does not list was answered %d, not a problem", a.status)
	}
	if a.status == http.StatusMethodNotAllowed && a.header.Get("Allow") == "" {
		return errors.New("a 405 without Allow")
	}
	body := a.body
	if a.header.Get("X-Encryption") != "" {
		var err error
		if body, err = open(a.body, mediaType(a.header) == "application/jose"); err != nil {
			return err
		}
	} else if mt := mediaType(a.header); mt != "application/problem+json" {
		return fmt.Errorf("Content-Type %q, want application/problem+json", mt)
	}
	return d.checkJSON("/components/schemas/Problem", body, "the problem")
}

// checkResponse checks a against the response object at pointer.
func (d *apiDoc) checkResponse(a answer, pointer string, open opener) error {
	resp, pointer := d.object(pointer)
	if resp == nil {
		return fmt.Errorf("no response object at %s", pointer)
	}
	if err := d.checkHeaders(a.header, resp, pointer); err != nil {
		return err
	}
	content, _ := resp["content"].(map[string]any)
	if len(content) == 0 {
		if len(a.body) != 0 {
			return fmt.Errorf("a body (%d bytes) where %s describes none", len(a.body), pointer)
		}
		if a.header.Get("X-Encryption") != "" {
			return errors.New("X-Encryption on an answer without a body")
		}
		return nil
	}
	mt := mediaType(a.header)
	if _, ok := content[mt]; !ok {
		return fmt.Errorf("Content-Type %q is not one of %s's: %v", mt, pointer, keys(content))
	}
	return d.checkBody(a, pointer+"/content/"+escapePointer(mt), open)
}

// checkHeaders checks the headers the response object describes.
func (d *apiDoc) checkHeaders(h http.Header, resp map[string]any, pointer string) error {
	headers, _ := resp["headers"].(map[string]any)
	for name := range headers {
		hdr, hptr := d.object(pointer + "/headers/" + escapePointer(name))
		values := h.Values(name)
		if required, _ := hdr["required"].(bool); required && len(values) == 0 {
			return fmt.Errorf("header %s is required", name)
		}
		if len(values) > 1 {
			return fmt.Errorf("header %s given %d times", name, len(values))
		}
		if len(values) == 1 {
			if err := d.validate(hptr+"/schema", values[0]); err != nil {
				return fmt.Errorf("header %s: %v", name, err)
			}
		}
	}
	return nil
}

// checkBody checks a's body against the media type object at pointer and,
// through its x-hdc-plaintext schema, what the body says.
func (d *apiDoc) checkBody(a answer, pointer string, open opener) error {
	media, _ := d.at(pointer).(map[string]any)
	mt := mediaType(a.header)
	var body any = string(a.body)
	if isJSON(mt) {
		var err error
		if body, err = jsonschema.UnmarshalJSON(bytes.NewReader(a.body)); err != nil {
			return fmt.Errorf("the %s body is not JSON: %v", mt, err)
		}
	}
	if err := d.validate(pointer+"/schema", body); err != nil {
		return fmt.Errorf("the body: %v", err)
	}
	_, hasPlaintext := media["x-hdc-plaintext"]
	enc := a.header.Values("X-Encryption")
	switch {
	case len(enc) == 0 && hasPlaintext:
		return d.validateAt(pointer+"/x-hdc-plaintext", body, "the plain body")
	case len(enc) == 0:
		return nil
	case !hasPlaintext:
		return fmt.Errorf("an encrypted answer (X-Encryption) where %s describes a plain one", pointer)
	}
	plaintext, err := open(a.body, mt == "application/jose")
	if err != nil {
		return fmt.Errorf("the envelope: %v", err)
	}
	return d.checkJSON(pointer+"/x-hdc-plaintext", plaintext, "the decrypted content")
}

// checkJSON checks that text is JSON matching the schema at pointer.
func (d *apiDoc) checkJSON(pointer string, text []byte, what string) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return fmt.Errorf("%s is not JSON: %v", what, err)
	}
	return d.validateAt(pointer, v, what)
}

// validateAt validates v against the schema at pointer, naming v in the error.
func (d *apiDoc) validateAt(pointer string, v any, what string) error {
	if err := d.validate(pointer, v); err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	return nil
}

// mediaType is the answer's media type, without parameters.
func mediaType(h http.Header) string {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return h.Get("Content-Type")
	}
	return mt
}

// isJSON reports whether a media type is JSON.
func isJSON(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// decodeBase64URL decodes the contentEncoding base64url: unpadded, as JOSE
// writes it.
func decodeBase64URL(s string) ([]byte, error) {
	return base64.RawURLEncoding.Strict().DecodeString(s)
}
