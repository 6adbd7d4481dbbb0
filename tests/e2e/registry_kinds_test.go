package e2e

import (
	"bytes"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestRegistryFileKeepsKeyKinds: a standalone edge takes each key of its
// registry file as the file says it is. The file holds an A256GCM key
// that hdc keys add --registry made with --require-fresh, and two entries
// written by hand, their secrets in the clear: an A256GCM key and an
// A128CBC-HS256 key, each with "require_fresh":true. Under each kid, a
// login whose envelope names iat and jti is served; the same login
// without them is refused as freshness_required, sealed under the key;
// an envelope of the other enc fails as one under a wrong key does. hdc
// keys import then moves the file into the database, each key's enc and
// require_fresh with it.
func TestRegistryFileKeepsKeyKinds(t *testing.T) {
	t.Parallel()
	s := hdctest.StartFileStack(t)
	added := s.NewClientEnc("registry-gcm", hdctest.EncGCM, "--require-fresh")
	gcm := clientOf(s, "registry-gcm-by-hand", jwe.EncA256GCM, jwe.NewGCMSecret())
	strict := clientOf(s, "registry-strict-by-hand", jwe.EncA128CBCHS256, "strict-key-16byt")
	s.EditRegistry(func(f string) string {
		return strings.Replace(f, `"keys": [`, `"keys": [`+entryOf(gcm)+`,`+entryOf(strict)+`,`, 1)
	})
	s.WaitForKey(gcm.Kid)
	want := map[string]kindOfKey{}
	for _, c := range []*hdctest.APIClient{added, gcm, strict} {
		t.Run(c.Enc+" "+c.Kid, func(t *testing.T) { loginsUnder(t, s, c) })
		want[c.Kid] = kindOfKey{c.Enc, true}
	}

	// The operator's HDC_KEY_REGISTRY names the file: --registry "" is
	// the database.
	var imported struct{ Keys int }
	s.HDC(&imported, "keys", "import", filepath.Join(s.Dir, "keys.json"), "--registry", "")
	var listed []clientkey.Listed
	s.HDC(&listed, "keys", "list", "--json", "--registry", "")
	got := map[string]kindOfKey{}
	for _, k := range listed {
		got[k.Kid] = kindOfKey{k.Enc, k.RequireFresh}
	}
	if imported.Keys != len(want) || !maps.Equal(got, want) {
		t.Fatalf("imported %d keys, which the database lists as %v; want %v", imported.Keys, got, want)
	}
}

// kindOfKey is a key's enc, and whether its envelopes must name iat and
// jti.
type kindOfKey struct {
	Enc   string
	Fresh bool
}

// clientOf creates a client in workspace whose key of enc and secret is
// yet to be written in the registry file (entryOf).
func clientOf(s *hdctest.Stack, workspace, enc, secret string) *hdctest.APIClient {
	var c struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	s.HDC(&c, "clients", "create", "--workspace", workspace)
	s.Creds.Add("a key written in the registry by hand", secret)
	return &hdctest.APIClient{ID: c.ClientID, Secret: c.ClientSecret, Workspace: workspace, Kid: "k-" + workspace, Key: secret, Enc: enc}
}

// entryOf is c's key as an operator writes it in the registry file: its
// secret in the clear, requiring fresh envelopes.
func entryOf(c *hdctest.APIClient) string {
	return fmt.Sprintf(`{"kid": %q, "client_id": %q, "enc": %q, "require_fresh": true, "status": "active", "created_at": %q, "secret": %q}`,
		c.Kid, c.ID, c.Enc, time.Now().UTC().Format(time.RFC3339), c.Key)
}

// loginsUnder logs c in with envelopes under its kid: one naming iat and
// jti is served, the same without them is refused, and one of the other
// enc fails as one under a wrong key of the kid's enc does.
func loginsUnder(t *testing.T, s *hdctest.Stack, c *hdctest.APIClient) {
	key, err := jwe.NewKeyFor(c.Enc, c.Key)
	if err != nil {
		t.Fatal(err)
	}
	cbc, gcm := mustKeyFor(t, jwe.EncA128CBCHS256, "another-key-0016"), mustKeyFor(t, jwe.EncA256GCM, jwe.NewGCMSecret())
	wrong, other := gcm, cbc // a wrong key of the kid's enc, and a key of the other enc
	if c.Enc == jwe.EncA128CBCHS256 {
		wrong, other = cbc, gcm
	}
	login := func(k *jwe.CEK, p jwe.Protected) *hdctest.Response {
		r, err := s.Request(s.Edge, "POST", hdctest.LoginPath, jwe.EncryptRequest(k, p, hdctest.LoginBody(c)),
			map[string]string{hdctest.JWEHeader: "JWE", "Content-Type": hdctest.JSONType})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := login(key, jwe.Fresh(c.Kid)); r.Status != http.StatusOK || !bytes.Contains(opened(t, r, key), []byte(`"access_token"`)) {
		t.Fatalf("a login naming iat and jti: %s", r)
	}
	if r := login(key, jwe.Protected{Kid: c.Kid}); r.Status != http.StatusBadRequest ||
		!bytes.Contains(opened(t, r, key), []byte(`"code":"`+problem.CodeFreshnessRequired+`"`)) {
		t.Fatalf("a login without iat and jti: %s", r)
	}
	badTag := login(wrong, jwe.Fresh(c.Kid))
	if r := login(other, jwe.Fresh(c.Kid)); r.Status != http.StatusBadRequest || !bytes.Equal(r.Body, badTag.Body) {
		t.Fatalf("an envelope of the other enc: %s; under a wrong key: %s", r, badTag)
	}
}

// opened returns the plaintext of r's body, an envelope under k.
func opened(t *testing.T, r *hdctest.Response, k *jwe.CEK) []byte {
	t.Helper()
	e, ct, err := jwe.Parse(r.Body, jwe.Flattened)
	if err != nil {
		t.Fatalf("the answer is no envelope: %s", r)
	}
	pt, err := e.Decrypt(k, ct)
	if err != nil {
		t.Fatalf("the answer is not sealed under the key: %s", r)
	}
	return pt
}

func mustKeyFor(t *testing.T, enc, secret string) *jwe.CEK {
	t.Helper()
	k, err := jwe.NewKeyFor(enc, secret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
