package hdctest

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

// The documents, relative to the repository's root: the public API's and
// the Admin API's.
const (
	APIDocPath      = "docs/openapi.yaml"
	AdminAPIDocPath = "docs/admin-openapi.yaml"
)

// docURL names the document for the schema compiler.
const docURL = "file:///openapi.json"

// APIDoc is the OpenAPI document, its schemas compiled on first use.
type APIDoc struct {
	Root     map[string]any
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

// OpenAPI is the repository's document, read once.
var OpenAPI = sync.OnceValues(func() (*APIDoc, error) {
	return loadAPIDoc(filepath.Join(RepoRoot, APIDocPath))
})

// AdminOpenAPI is the Admin API's document, read once. Its paths are
// relative to its server, /admin/v1.
var AdminOpenAPI = sync.OnceValues(func() (*APIDoc, error) {
	return loadAPIDoc(filepath.Join(RepoRoot, AdminAPIDocPath))
})

// loadAPIDoc reads an OpenAPI document in YAML.
func loadAPIDoc(path string) (*APIDoc, error) {
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
	d := &APIDoc{Root: doc, compiler: c, schemas: map[string]*jsonschema.Schema{}}
	paths, _ := doc["paths"].(map[string]any)
	for p := range paths {
		re := regexp.QuoteMeta(p)
		re = regexp.MustCompile(`\\\{[^/]+\\\}`).ReplaceAllString(re, `[^/]+`)
		d.paths = append(d.paths, pathTemplate{pointer: "/paths/" + EscapePointer(p), re: regexp.MustCompile("^" + re + "$")})
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

// EscapePointer escapes a JSON pointer token (RFC 6901).
func EscapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// At returns the value at a JSON pointer of the document, nil if none.
func (d *APIDoc) At(pointer string) any {
	var v any = d.Root
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
func (d *APIDoc) object(pointer string) (map[string]any, string) {
	for range 10 {
		m, _ := d.At(pointer).(map[string]any)
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return m, pointer
		}
		pointer = strings.TrimPrefix(ref, "#")
	}
	return nil, pointer
}

// schema compiles the schema at pointer once.
func (d *APIDoc) schema(pointer string) (*jsonschema.Schema, error) {
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

// Validate checks v against the schema at pointer.
func (d *APIDoc) Validate(pointer string, v any) error {
	s, err := d.schema(pointer)
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// Answer is an HTTP answer, read whole, and the request it answers.
type Answer struct {
	Method, Path string
	Status       int
	Header       http.Header
	Body         []byte
}

func (a Answer) String() string { return fmt.Sprintf("%s %s → %d", a.Method, a.Path, a.Status) }

// Opener decrypts an encrypted answer's body (compact or flattened JSON).
type Opener func(body []byte, compact bool) ([]byte, error)

// Check validates a against the document; open decrypts encrypted bodies.
func (d *APIDoc) Check(a Answer, open Opener) error {
	pathPtr := ""
	for _, p := range d.paths {
		if p.re.MatchString(a.Path) {
			pathPtr = p.pointer
		}
	}
	if pathPtr == "" {
		switch a.Status {
		case http.StatusNotFound:
			return d.checkResponse(a, "/components/responses/NotFound", open)
		case http.StatusMisdirectedRequest: // a host the site does not serve, whatever the path
			return d.checkResponse(a, "/components/responses/Misdirected", open)
		}
		return fmt.Errorf("a path the document does not list must be answered 404 (421 for another host), not %d", a.Status)
	}
	opPtr := pathPtr + "/" + strings.ToLower(a.Method)
	if d.At(opPtr) == nil {
		return d.checkUnlisted(a, open)
	}
	respPtr, err := d.responseFor(opPtr, a.Status)
	if err != nil {
		return err
	}
	return d.checkResponse(a, respPtr, open)
}

// responseFor returns the pointer of the operation's response for status.
func (d *APIDoc) responseFor(opPtr string, status int) (string, error) {
	responses, _ := d.At(opPtr + "/responses").(map[string]any)
	for _, key := range []string{strconv.Itoa(status), strconv.Itoa(status/100) + "XX", "default"} {
		if _, ok := responses[key]; ok {
			return opPtr + "/responses/" + key, nil
		}
	}
	return "", fmt.Errorf("status %d is not documented for this operation", status)
}

// checkUnlisted checks the answer to a method the path does not list: a
// problem, plain or sealed, and a 405 names what the path allows.
func (d *APIDoc) checkUnlisted(a Answer, open Opener) error {
	if a.Status < 400 {
		return fmt.Errorf("a method the path does not list was answered %d, not a problem", a.Status)
	}
	if a.Status == http.StatusMethodNotAllowed && a.Header.Get("Allow") == "" {
		return errors.New("a 405 without Allow")
	}
	body := a.Body
	if a.Header.Get("X-Encryption") != "" {
		var err error
		if body, err = open(a.Body, mediaType(a.Header) == "application/jose"); err != nil {
			return err
		}
	} else if mt := mediaType(a.Header); mt != "application/problem+json" {
		return fmt.Errorf("Content-Type %q, want application/problem+json", mt)
	}
	return d.CheckJSON("/components/schemas/Problem", body, "the problem")
}

// checkResponse checks a against the response object at pointer.
func (d *APIDoc) checkResponse(a Answer, pointer string, open Opener) error {
	resp, pointer := d.object(pointer)
	if resp == nil {
		return fmt.Errorf("no response object at %s", pointer)
	}
	if err := d.checkHeaders(a.Header, resp, pointer); err != nil {
		return err
	}
	content, _ := resp["content"].(map[string]any)
	if len(content) == 0 {
		if len(a.Body) != 0 {
			return fmt.Errorf("a body (%d bytes) where %s describes none", len(a.Body), pointer)
		}
		if a.Header.Get("X-Encryption") != "" {
			return errors.New("X-Encryption on an answer without a body")
		}
		return nil
	}
	mt := mediaType(a.Header)
	if _, ok := content[mt]; !ok {
		return fmt.Errorf("Content-Type %q is not one of %s's: %v", mt, pointer, keys(content))
	}
	return d.checkBody(a, pointer+"/content/"+EscapePointer(mt), open)
}

// checkHeaders checks the headers the response object describes.
func (d *APIDoc) checkHeaders(h http.Header, resp map[string]any, pointer string) error {
	headers, _ := resp["headers"].(map[string]any)
	for name := range headers {
		hdr, hptr := d.object(pointer + "/headers/" + EscapePointer(name))
		values := h.Values(name)
		if required, _ := hdr["required"].(bool); required && len(values) == 0 {
			return fmt.Errorf("header %s is required", name)
		}
		if len(values) > 1 {
			return fmt.Errorf("header %s given %d times", name, len(values))
		}
		if len(values) == 1 {
			if err := d.Validate(hptr+"/schema", values[0]); err != nil {
				return fmt.Errorf("header %s: %v", name, err)
			}
		}
	}
	return nil
}

// checkBody checks a's body against the media type object at pointer and,
// through its x-hdc-plaintext schema, what the body says.
func (d *APIDoc) checkBody(a Answer, pointer string, open Opener) error {
	media, _ := d.At(pointer).(map[string]any)
	mt := mediaType(a.Header)
	var body any = string(a.Body)
	if isJSON(mt) {
		var err error
		if body, err = jsonschema.UnmarshalJSON(bytes.NewReader(a.Body)); err != nil {
			return fmt.Errorf("the %s body is not JSON: %v", mt, err)
		}
	}
	if err := d.Validate(pointer+"/schema", body); err != nil {
		return fmt.Errorf("the body: %v", err)
	}
	_, hasPlaintext := media["x-hdc-plaintext"]
	enc := a.Header.Values("X-Encryption")
	switch {
	case len(enc) == 0 && hasPlaintext:
		return d.ValidateAt(pointer+"/x-hdc-plaintext", body, "the plain body")
	case len(enc) == 0:
		return nil
	case !hasPlaintext:
		return fmt.Errorf("an encrypted answer (X-Encryption) where %s describes a plain one", pointer)
	}
	plaintext, err := open(a.Body, mt == "application/jose")
	if err != nil {
		return fmt.Errorf("the envelope: %v", err)
	}
	return d.CheckJSON(pointer+"/x-hdc-plaintext", plaintext, "the decrypted content")
}

// CheckJSON checks that text is JSON matching the schema at pointer.
func (d *APIDoc) CheckJSON(pointer string, text []byte, what string) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return fmt.Errorf("%s is not JSON: %v", what, err)
	}
	return d.ValidateAt(pointer, v, what)
}

// ValidateAt validates v against the schema at pointer, naming v in the error.
func (d *APIDoc) ValidateAt(pointer string, v any, what string) error {
	if err := d.Validate(pointer, v); err != nil {
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
