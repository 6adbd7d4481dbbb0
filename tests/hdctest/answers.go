package hdctest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// answerCheck is an http.RoundTripper that checks every answer of the
// edges it knows against docs/openapi.yaml (openapi_check_test.go). It
// reads the answer whole and hands the caller an unread copy; an answer
// the document does not describe is reported with report, which fails the
// test that received it. Answers of any other address pass unchecked: the
// backend's listeners and the edge's admin API are not the public API.
type answerCheck struct {
	base   http.RoundTripper
	keys   *Keyring
	report func(format string, args ...any)

	mu    sync.Mutex
	edges map[string]bool // host:port

	checked atomic.Int64 // answers checked
}

// newAnswerCheck returns an answerCheck over base (nil: the default
// transport) that opens encrypted answers with the keys keys finds.
func newAnswerCheck(base http.RoundTripper, keys *Keyring, report func(format string, args ...any)) *answerCheck {
	if base == nil {
		base = http.DefaultTransport
	}
	return &answerCheck{base: base, keys: keys, report: report, edges: map[string]bool{}}
}

// AddEdge has the answers of the edge at base (http://host:port) checked.
func (c *answerCheck) AddEdge(base string) {
	u, err := url.Parse(base)
	if err != nil {
		panic(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.edges[u.Host] = true
}

func (c *answerCheck) isEdge(host string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.edges[host]
}

// RoundTrip sends req, and checks the answer if it comes from an edge.
func (c *answerCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil || !c.isEdge(req.URL.Host) {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil { // the caller sees what it would have seen
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		return resp, nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	a := Answer{Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode, Header: resp.Header, Body: body}
	if a.Method == "" {
		a.Method = http.MethodGet
	}
	doc, err := OpenAPI()
	if err == nil {
		err = doc.Check(a, c.keys.Open)
	}
	c.checked.Add(1)
	if err != nil {
		c.report("%s: the answer does not match %s: %v\nbody: %s", a, APIDocPath, err, Tail(string(body), 600))
	}
	return resp, nil
}

// errReader fails every read with err.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// CheckAnswers makes s's HTTP client check every answer of s's edge (and
// of the edges added to the returned answerCheck) against the document,
// failing the test s runs at the time.
func (s *Stack) CheckAnswers() *answerCheck {
	c := newAnswerCheck(s.HTTP.Transport, s.keyring(), func(format string, args ...any) {
		s.T.Errorf(format, args...)
	})
	if s.Edge != "" {
		c.AddEdge(s.Edge)
	}
	s.HTTP.Transport = c
	t := s.T
	t.Cleanup(func() { t.Logf("%d answers of the edge checked against %s", c.checked.Load(), APIDocPath) })
	return c
}

// Checked returns client with its answers from s's edge checked against
// the document, failing the test s runs.
func (s *Stack) Checked(client *http.Client) *http.Client {
	c := newAnswerCheck(client.Transport, s.keyring(), func(format string, args ...any) {
		s.T.Errorf(format, args...)
	})
	c.AddEdge(s.Edge)
	client.Transport = c
	return client
}

// CheckedClient returns client with its answers from the edge at edge
// checked against the document, failing t; keys finds the edge's keys.
func CheckedClient(t testing.TB, client *http.Client, edge string, keys *Keyring) *http.Client {
	c := newAnswerCheck(client.Transport, keys, t.Errorf)
	c.AddEdge(edge)
	client.Transport = c
	return client
}

// Keyring finds the shared keys of an edge by kid, to open encrypted
// answers: in its key registry file, and in the backend's key plane,
// asked as an edge asks it. It remembers every secret it has seen for a
// kid: a test may rewrite the file with values the edge refuses, keeping
// the ones it had.
type Keyring struct {
	Path   string
	keeper func() string // the keeper's URL now; empty: keeperFile beside path
	url    string        // the URL sealer's keeper was opened from
	sealer *registryfile.Sealer
	// plane, when set, asks the backend's key plane for a kid.
	Plane func(kid string) (string, bool)

	mu      sync.Mutex
	secrets map[string][]string
}

// candidates returns the secrets known for kid, reading the file again
// first when reload is set.
func (k *Keyring) candidates(kid string, reload bool) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.secrets == nil {
		k.secrets = map[string][]string{}
		reload = true
	}
	if reload {
		k.read()
	}
	if k.Plane != nil && (reload || len(k.secrets[kid]) == 0) {
		if secret, ok := k.Plane(kid); ok && !slices.Contains(k.secrets[kid], secret) {
			k.secrets[kid] = append(k.secrets[kid], secret)
		}
	}
	return slices.Clone(k.secrets[kid])
}

// PlaneKeys asks the key plane of the backend whose internal listener is
// internal for a kid, over the hop with the edge's certificate of the
// hop's files in hop, as an edge does.
func PlaneKeys(hop, internal string) func(kid string) (string, bool) {
	client := sync.OnceValue(func() *http.Client {
		cfg, err := pki.ClientTLS(filepath.Join(hop, pki.CertFile(pki.Edge)), filepath.Join(hop, pki.KeyFile(pki.Edge)), filepath.Join(hop, pki.CAFile))
		if err != nil {
			return nil
		}
		return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	})
	return func(kid string) (string, bool) {
		if client() == nil {
			return "", false
		}
		resp, err := client().Get(internal + strings.Replace(contract.PathKey, "{kid}", url.PathEscape(kid), 1))
		if err != nil {
			return "", false
		}
		defer resp.Body.Close()
		var k contract.ClientKey
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&k) != nil {
			return "", false
		}
		return k.Secret, true
	}
}

// read adds the file's keys, opened with the keeper (a file of plain
// secrets needs none); a file that cannot be read adds none.
func (k *Keyring) read() {
	if k.Path == "" {
		return
	}
	// A registry rewrapped under another keeper opens only once the test
	// names that keeper, just after the rewrap has returned: until then,
	// its data key does not unwrap.
	var r *registryfile.Registry
	var err error
	testkit.WaitFor(10*time.Second, func() bool {
		r, err = registryfile.Load(k.Path, k.currentSealer())
		return !errors.Is(err, keeper.ErrUnwrap)
	})
	if err != nil {
		return
	}
	for _, key := range r.Keys() {
		if key.Secret != "" && !slices.Contains(k.secrets[key.Kid], key.Secret) {
			k.secrets[key.Kid] = append(k.secrets[key.Kid], key.Secret)
		}
	}
}

// currentSealer returns a sealer over the keeper the test names now.
func (k *Keyring) currentSealer() *registryfile.Sealer {
	url := keeper.KeyFileURL(filepath.Join(filepath.Dir(k.Path), KeeperFile))
	if k.keeper != nil && k.keeper() != "" {
		url = k.keeper()
	}
	if k.sealer == nil || url != k.url {
		if kp, err := keeper.Open(context.Background(), url); err == nil {
			k.sealer, k.url = registryfile.NewSealer(kp), url
		}
	}
	return k.sealer
}

// ParseEnvelope reads an envelope with go-jose: alg dir, enc
// A128CBC-HS256, compact or in the JSON serialization.
func ParseEnvelope(body []byte, compact bool) (*jose.JSONWebEncryption, error) {
	algs, encs := []jose.KeyAlgorithm{jose.DIRECT}, []jose.ContentEncryption{jose.A128CBC_HS256, jose.A256GCM}
	if compact {
		return jose.ParseEncryptedCompact(string(body), algs, encs)
	}
	return jose.ParseEncryptedJSON(string(body), algs, encs)
}

// contentKeys returns the content-encryption keys a secret may be: an
// A128CBC-HS256 shared string written twice, or an A256GCM key's k
// decoded. go-jose's Decrypt fails with the one of the other enc.
func contentKeys(secret string) [][]byte {
	keys := [][]byte{[]byte(secret + secret)}
	if raw, err := base64.RawURLEncoding.DecodeString(secret); err == nil && len(raw) == 32 {
		keys = append(keys, raw)
	}
	return keys
}

// Open decrypts an answer's envelope with go-jose and the key its
// protected header names.
func (k *Keyring) Open(body []byte, compact bool) ([]byte, error) {
	obj, err := ParseEnvelope(body, compact)
	if err != nil {
		return nil, err
	}
	kid := obj.Header.KeyID
	if kid == "" {
		return nil, errors.New("no kid in the protected header")
	}
	for _, reload := range []bool{false, true} {
		for _, secret := range k.candidates(kid, reload) {
			for _, cek := range contentKeys(secret) {
				if plaintext, err := obj.Decrypt(cek); err == nil {
					return plaintext, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("no key %q of %s opens it", kid, k.Path)
}
