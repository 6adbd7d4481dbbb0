// Package edgetest is test support for the edge's modules: a keeper and a
// key registry of known keys, modules provisioned as Caddy would outside a
// running config, and envelopes as a client makes them and reads them.
package edgetest

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// KeeperURL names the keeper of every registry file the tests write, an
// edge's HDC_KEEPER; Sealer seals with it.
var KeeperURL, Sealer = newKeeper()

func newKeeper() (string, *registryfile.Sealer) {
	url := testkit.KeeperURL()
	k, err := keeper.Open(context.Background(), url)
	if err != nil {
		panic(err)
	}
	return url, registryfile.NewSealer(k)
}

// Keys are the keys the tests' registries hold: two clients', c1's in
// each status.
var Keys = []registryfile.Entry{
	{Key: clientkey.Key{Kid: "k-c1", ClientID: "c1", Secret: "0123456789abcdef", Status: clientkey.Active}},
	{Key: clientkey.Key{Kid: "k-c1-old", ClientID: "c1", Secret: "aaaaaaaaaaaaaaaa", Status: clientkey.Retiring}},
	{Key: clientkey.Key{Kid: "k-c1-dead", ClientID: "c1", Secret: "bbbbbbbbbbbbbbbb", Status: clientkey.Retired}},
	{Key: clientkey.Key{Kid: "k-c2", ClientID: "c2", Secret: "fedcba9876543210", Status: clientkey.Active}},
}

// SecretOf is the secret of the kid among Keys, or one no key has.
func SecretOf(kid string) string {
	for _, k := range Keys {
		if k.Kid == kid {
			return k.Secret
		}
	}
	return "zzzzzzzzzzzzzzzz"
}

// Key returns the cipher of a shared secret.
func Key(t testing.TB, shared string) *jwe.CEK {
	t.Helper()
	k, err := jwe.NewKey(shared)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Registry writes a registry file of keys, sealed with Sealer, in a
// directory of the test's, and returns its path.
func Registry(t testing.TB, keys []registryfile.Entry) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys.json")
	err := registryfile.Update(path, Sealer, func(f *registryfile.File) error {
		for _, k := range keys {
			k.CreatedAt = time.Now()
			f.Keys = append(f.Keys, k)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// Provision provisions m in a Caddy context of its own, as a config
// would, and cleans it up when the test ends.
func Provision(t testing.TB, m caddy.Provisioner) {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	if err := m.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if c, ok := m.(caddy.CleanerUpper); ok {
		t.Cleanup(func() {
			if err := c.Cleanup(); err != nil {
				t.Error(err)
			}
		})
	}
}

// ParseAnswer reads an encrypted answer in the form its media type names,
// and holds it to the shape every JOSE library reads: a protected header
// that names the algorithms and the key, which is the answer's X-Hdc-Key-Id.
func ParseAnswer(t testing.TB, h http.Header, body []byte) (*jwe.Envelope, []byte) {
	t.Helper()
	if h.Get("X-Encryption") != "JWE" {
		t.Fatalf("response not marked encrypted: %s", body)
	}
	form := jwe.Flattened
	switch ct := h.Get("Content-Type"); ct {
	case "application/jose":
		form = jwe.Compact
	case "application/json":
	default:
		t.Fatalf("encrypted answer has Content-Type %q", ct)
	}
	e, ct, err := jwe.Parse(body, form)
	if err != nil {
		t.Fatalf("response is not an envelope: %v", err)
	}
	if e.AAD == "" || e.Header.Alg != jwe.AlgDir || !jwe.ValidEnc(e.Header.Enc) || e.Header.Kid == "" {
		t.Fatalf("answer's protected header %+v: want alg, enc and kid", e.Header)
	}
	return e, ct
}

// RawEnvelope builds an authentic envelope (its tag verifies) of whole
// blocks encrypted as they are, with no padding added: two blocks of zeros
// make invalid padding.
func RawEnvelope(t testing.TB, shared, kid string, blocks []byte) []byte {
	t.Helper()
	protected := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"dir","enc":"A128CBC-HS256"}`))
	iv := make([]byte, 16)
	block, err := aes.NewCipher([]byte(shared)) // the second half of shared‖shared
	if err != nil {
		t.Fatal(err)
	}
	ct := bytes.Clone(blocks)
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(ct, ct)
	mac := hmac.New(sha256.New, []byte(shared)) // the first half
	mac.Write([]byte(protected))
	mac.Write(iv)
	mac.Write(ct)
	mac.Write(binary.BigEndian.AppendUint64(nil, uint64(len(protected))*8))
	out, _ := json.Marshal(map[string]string{"protected": protected, "iv": base64.RawURLEncoding.EncodeToString(iv),
		"ciphertext": base64.RawURLEncoding.EncodeToString(ct), "tag": base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16]), "kid": kid})
	return out
}

// FlipB64 flips one bit of the decoded value of a base64url member.
func FlipB64(t testing.TB, s string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0x10
	return base64.RawURLEncoding.EncodeToString(raw)
}
