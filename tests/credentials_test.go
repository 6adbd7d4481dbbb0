package tests

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
)

// credentialMembers are the JSON members, in requests, answers and the
// output of hdc, whose values are credentials.
var credentialMembers = map[string]string{
	"client_secret": "a client secret", "sharing_key": "a sharing key", "access_token": "an access token",
	"refresh_token": "a refresh token", "signing_key": "a webhook signing key", "secret": "an encryption key",
	"encryption_key": "an encryption key",
}

// credentialShapes are credentials recognised by their form, whoever made
// them.
var credentialShapes = []struct {
	what string
	re   *regexp.Regexp
}{
	{"a client secret, sharing key or refresh token", regexp.MustCompile(`hdc_(cs|sk|rt)_[A-Za-z0-9_-]{8}`)},
	{"a signed JWT", regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8}`)},
	{"a PEM private key", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`)},
}

// credentials is the ledger of the credentials a test handled, so that
// the logs of the processes it ran can be searched for them.
type credentials struct {
	mu     sync.Mutex
	values map[string]string // value → what it is
	// unlogged are values no log may carry that other records may (a
	// query value: a record's identifier, which its audit record names).
	unlogged map[string]string
}

// add notes values as credentials of kind what; short ones are ignored.
func (c *credentials) add(what string, values ...string) { c.note(&c.values, what, values) }

// addUnlogged notes values that no log may carry, as add does, which are
// no credentials: scan looks for them, scanRecord does not.
func (c *credentials) addUnlogged(what string, values ...string) { c.note(&c.unlogged, what, values) }

// note adds values of 8 bytes or more to the ledger m as of kind what.
func (c *credentials) note(m *map[string]string, what string, values []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if *m == nil {
		*m = map[string]string{}
	}
	for _, v := range values {
		if len(v) >= 8 {
			(*m)[v] = what
		}
	}
}

// noteJSON notes the credential members of a JSON document, at any depth;
// anything else is ignored.
func (c *credentials) noteJSON(b []byte) {
	var v any
	if json.Unmarshal(b, &v) == nil {
		c.walk(v)
	}
}

func (c *credentials) walk(v any) {
	switch v := v.(type) {
	case map[string]any:
		for name, member := range v {
			if s, ok := member.(string); ok && credentialMembers[name] != "" {
				c.add(credentialMembers[name], s)
			}
			c.walk(member)
		}
	case []any:
		for _, e := range v {
			c.walk(e)
		}
	}
}

// noteBearer notes the token of an Authorization header value.
func (c *credentials) noteBearer(header string) {
	if tok, ok := strings.CutPrefix(header, "Bearer "); ok {
		c.add("an access token", tok)
	}
}

// notePEMFile notes the first line of each block of a PEM file, enough to
// recognise the key in a log.
func (c *credentials) notePEMFile(t testing.TB, what, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for block, rest := pem.Decode(b); block != nil; block, rest = pem.Decode(rest) {
		body := string(pem.EncodeToMemory(block))
		lines := strings.Split(body, "\n")
		if len(lines) > 1 {
			c.add(what, lines[1])
		}
	}
}

// scan fails t when the log of name carries a credential or another value
// no log may carry, naming only what kind it is.
func (c *credentials) scan(t testing.TB, name, log string) {
	t.Helper()
	c.scanRecord(t, name, log)
	c.mu.Lock()
	defer c.mu.Unlock()
	for v, what := range c.unlogged {
		if strings.Contains(log, v) {
			t.Errorf("%s's log carries %s", name, what)
		}
	}
}

// scanRecord fails t when the record of name (an audit record, say)
// carries a credential, naming only what kind it is.
func (c *credentials) scanRecord(t testing.TB, name, record string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for v, what := range c.values {
		if strings.Contains(record, v) {
			t.Errorf("%s's log carries %s", name, what)
		}
	}
	for _, shape := range credentialShapes {
		if shape.re.MatchString(record) {
			t.Errorf("%s's log carries %s", name, shape.what)
		}
	}
}

// noteSigningKeys notes the token signing keys in the SQLite database at
// path (when there is one: a stack may use PostgreSQL), their seeds opened
// with the keeper keeperURL names, in the encodings a log could show them
// in. The backend must have stopped.
func (c *credentials) noteSigningKeys(t testing.TB, path, keeperURL string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return
	}
	plain, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Errorf("opening the backend's database: %v", err)
		return
	}
	st, err := backend.Seal(context.Background(), plain, keeperURL, zap.NewNop())
	if err != nil {
		t.Errorf("opening the backend's database: %v", err)
		return
	}
	defer st.Close()
	keys, err := st.ListSigningKeys(context.Background())
	if err != nil {
		t.Errorf("listing the signing keys: %v", err)
		return
	}
	for _, k := range keys {
		private := ed25519.NewKeyFromSeed(k.Seed)
		c.add("a token signing key", base64.RawURLEncoding.EncodeToString(k.Seed),
			base64.StdEncoding.EncodeToString(k.Seed), hex.EncodeToString(k.Seed),
			base64.StdEncoding.EncodeToString(private), base64.RawURLEncoding.EncodeToString(private))
	}
}
