package hdctest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/sealed"
	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/backend/store"
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

// Credentials is the ledger of the credentials a test handled, so that
// the logs of the processes it ran can be searched for them. Copies share
// one ledger (a stack's view for a subtest, Stack.For), which is made at
// the first use.
type Credentials struct {
	l *ledger
}

// ledger is what Credentials notes.
type ledger struct {
	mu     sync.Mutex
	values map[string]string // value → what it is
	// unlogged are values no log may carry that other records may (a
	// query value: a record's identifier, which its audit record names).
	unlogged map[string]string
}

// ledger returns c's ledger, made at the first call: before any copy of
// c is made, and before goroutines share c.
func (c *Credentials) ledger() *ledger {
	if c.l == nil {
		c.l = &ledger{values: map[string]string{}, unlogged: map[string]string{}}
	}
	return c.l
}

// Add notes values as credentials of kind what; short ones are ignored.
func (c *Credentials) Add(what string, values ...string) { c.note(false, what, values) }

// addUnlogged notes values that no log may carry, as add does, which are
// no credentials: scan looks for them, scanRecord does not.
func (c *Credentials) addUnlogged(what string, values ...string) { c.note(true, what, values) }

// note adds values of 8 bytes or more to the ledger, as of kind what:
// credentials, or values that no log may carry.
func (c *Credentials) note(unlogged bool, what string, values []string) {
	l := c.ledger()
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.values
	if unlogged {
		m = l.unlogged
	}
	for _, v := range values {
		if len(v) >= 8 {
			m[v] = what
		}
	}
}

// NoteJSON notes the credential members of a JSON document, at any depth;
// anything else is ignored.
func (c *Credentials) NoteJSON(b []byte) {
	var v any
	if json.Unmarshal(b, &v) == nil {
		c.walk(v)
	}
}

func (c *Credentials) walk(v any) {
	switch v := v.(type) {
	case map[string]any:
		for name, member := range v {
			if s, ok := member.(string); ok && credentialMembers[name] != "" {
				c.Add(credentialMembers[name], s)
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
func (c *Credentials) noteBearer(header string) {
	if tok, ok := strings.CutPrefix(header, "Bearer "); ok {
		c.Add("an access token", tok)
	}
}

// NotePEMFile notes the first line of each block of a PEM file, enough to
// recognise the key in a log.
func (c *Credentials) NotePEMFile(t testing.TB, what, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for block, rest := pem.Decode(b); block != nil; block, rest = pem.Decode(rest) {
		body := string(pem.EncodeToMemory(block))
		lines := strings.Split(body, "\n")
		if len(lines) > 1 {
			c.Add(what, lines[1])
		}
	}
}

// Scan fails t when the log of name carries a credential or another value
// no log may carry, naming only what kind it is.
func (c *Credentials) Scan(t testing.TB, name, log string) {
	t.Helper()
	c.ScanRecord(t, name, log)
	l := c.ledger()
	l.mu.Lock()
	defer l.mu.Unlock()
	for v, what := range l.unlogged {
		if strings.Contains(log, v) {
			t.Errorf("%s's log carries %s", name, what)
		}
	}
}

// ScanRecord fails t when the record of name (an audit record, say)
// carries a credential, naming only what kind it is.
func (c *Credentials) ScanRecord(t testing.TB, name, record string) {
	t.Helper()
	l := c.ledger()
	l.mu.Lock()
	defer l.mu.Unlock()
	for v, what := range l.values {
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

// NoteSigningKeys notes the token signing keys in the SQLite database at
// path (when there is one: a stack may use PostgreSQL), their seeds opened
// with the keeper keeperURL names, in the encodings a log could show them
// in. The backend must have stopped.
func (c *Credentials) NoteSigningKeys(t testing.TB, path, keeperURL string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return
	}
	plain, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Errorf("opening the backend's database: %v", err)
		return
	}
	st, err := storage.Seal(context.Background(), plain, keeperURL, zap.NewNop())
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
		c.Add("a token signing key", base64.RawURLEncoding.EncodeToString(k.Seed),
			base64.StdEncoding.EncodeToString(k.Seed), hex.EncodeToString(k.Seed),
			base64.StdEncoding.EncodeToString(private), base64.RawURLEncoding.EncodeToString(private))
	}
}

// Stop stops the stack's processes, as at the end of the test: gracefully,
// so that the backend writes its last audit checkpoint and closes its
// database.
func (s *Stack) Stop() {
	for _, p := range s.Procs {
		_ = p.Cmd.Process.Signal(syscall.SIGTERM)
		<-p.Done
	}
}

// OpenSealed opens the stack's SQLite database with its keeper, as the
// backend does. The backend must have stopped.
func (s *Stack) OpenSealed(t *testing.T) *sealed.Store {
	t.Helper()
	plain, err := sqlite.Open(t.Context(), filepath.Join(s.Dir, "backend", "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.Seal(t.Context(), plain, s.Keeper, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// SecretForms returns secret in the forms a file could hold it in.
func SecretForms(secret []byte) [][]byte {
	return [][]byte{secret, []byte(hex.EncodeToString(secret)), []byte(base64.StdEncoding.EncodeToString(secret)),
		[]byte(base64.RawURLEncoding.EncodeToString(secret))}
}

// FindInFiles returns the files under dir that hold one of the forms of
// secret.
func FindInFiles(t *testing.T, dir string, secret []byte) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() { // a directory, or a socket such as the edge's admin API
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, form := range SecretForms(secret) {
			if bytes.Contains(data, form) {
				found = append(found, path)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// SecretHash returns the stored hash of the client's secret.
func (s *Stack) SecretHash(clientID string) string {
	s.T.Helper()
	var c store.Client
	s.WithStore(func(st store.Store) (err error) {
		c, err = st.GetClient(context.Background(), clientID)
		return err
	})
	return c.SecretHash
}

// WithStore runs fn on the stack's store, opened beside the running
// backend.
func (s *Stack) WithStore(fn func(store.Store) error) {
	s.T.Helper()
	st, err := storage.OpenExistingStore(context.Background(), "", filepath.Join(s.Dir, "backend"))
	if err != nil {
		s.T.Fatal(err)
	}
	defer st.Close()
	if err := fn(st); err != nil {
		s.T.Fatal(err)
	}
}
