// Package kidregistry holds the edge's shared encryption keys: which key id
// (kid) names which 16-byte shared key string, which client owns it, and where
// it is in its rotation (active, retiring, retired).
//
// The registry lives in one JSON file that operators change with the hdc CLI
// (atomic writes under a lock) and that the edge polls and swaps in without a
// restart, keeping the last good version when a new one is invalid.
package kidregistry

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/strictjson"
)

// SecretSize is the length in bytes of a shared key string: A128CBC-HS256
// takes 32 key bytes and the specification makes them the string twice.
const SecretSize = 16

// Status is where a key is in its rotation, as the backend's key plane
// spells it too.
type Status = contract.KeyStatus

const (
	// Active keys are accepted and are what a client should encrypt with.
	Active = contract.KeyActive
	// Retiring keys are still accepted, for the grace period of a rotation.
	Retiring = contract.KeyRetiring
	// Retired keys are refused.
	Retired = contract.KeyRetired
)

// Key is one entry of the registry, its secret opened.
type Key struct {
	Kid      string
	ClientID string
	// Secret is the shared key string; empty when its sealed form did not
	// open (Available).
	Secret     string
	Status     Status
	CreatedAt  time.Time
	RetiringAt *time.Time
	RetiredAt  *time.Time
	// Enc is the content encryption of the key's envelopes: "" (a
	// registry file's keys) is A128CBC-HS256; the key plane's may be
	// A256GCM, whose Secret is a JWK's "k".
	Enc string
	// RequireFresh: every envelope under the key must name iat and jti
	// (always so for A256GCM keys).
	RequireFresh bool
	// sealed is the secret as the file held it sealed, kept for a key whose
	// secret did not open, so that writing the file loses nothing.
	sealed string
}

// Available reports whether the key's secret is known: false when its
// sealed form did not open (altered, or copied from another kid).
func (k *Key) Available() bool { return k.Secret != "" || k.sealed == "" }

// Usable reports whether requests encrypted with the key are accepted: its
// secret is available and its status active or retiring.
func (k *Key) Usable() bool {
	return k.Secret != "" && (k.Status == Active || k.Status == Retiring)
}

// Listed is a key without its secret, as the operator's list and the
// edge's admin API show it.
type Listed struct {
	Kid      string `json:"kid"`
	ClientID string `json:"client_id"`
	Enc      string `json:"enc"`
	// RequireFresh: every envelope under the key must name iat and jti.
	RequireFresh bool       `json:"require_fresh"`
	Status       Status     `json:"status"`
	CreatedAt    time.Time  `json:"created_at"`
	RetiringAt   *time.Time `json:"retiring_at,omitempty"`
	RetiredAt    *time.Time `json:"retired_at,omitempty"`
}

// Listed returns the key without its secret.
func (k *Key) Listed() Listed {
	return Listed{Kid: k.Kid, ClientID: k.ClientID, Enc: k.ContentEncryption(), RequireFresh: k.NeedsFreshness(), Status: k.Status, CreatedAt: k.CreatedAt,
		RetiringAt: k.RetiringAt, RetiredAt: k.RetiredAt}
}

// File is the registry's keys as a command edits them (Update).
type File struct {
	Keys []Key
}

// Validate checks every rule of the file format. Its errors name the key by
// kid and never include a secret.
func (f *File) Validate() error {
	seen := make(map[string]bool, len(f.Keys))
	var errs []error
	for i := range f.Keys {
		k := &f.Keys[i]
		if err := k.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("key %d (%q): %w", i, k.Kid, err))
		}
		if seen[k.Kid] {
			errs = append(errs, fmt.Errorf("key %d (%q): duplicate kid", i, k.Kid))
		}
		seen[k.Kid] = true
	}
	return errors.Join(errs...)
}

// Validate checks the rules of one key, wherever it comes from (a file or
// the backend). Its errors never include the secret.
func (k *Key) Validate() error {
	var errs []error
	if !contract.ValidKid(k.Kid) {
		errs = append(errs, errors.New("kid must be 1 to 128 characters of A-Z a-z 0-9 . _ : -"))
	}
	if k.ClientID == "" || len(k.ClientID) > 256 || !utf8.ValidString(k.ClientID) {
		errs = append(errs, errors.New("client_id must be 1 to 256 bytes of UTF-8"))
	}
	switch {
	case !jwe.ValidEnc(k.ContentEncryption()):
		errs = append(errs, fmt.Errorf("enc must be %s or %s", jwe.EncA128CBCHS256, jwe.EncA256GCM))
	case !k.Available():
	case k.ContentEncryption() == jwe.EncA256GCM:
		if _, err := jwe.NewKeyFor(jwe.EncA256GCM, k.Secret); err != nil {
			errs = append(errs, fmt.Errorf("an %s secret must be %d bytes in unpadded base64url", jwe.EncA256GCM, jwe.GCMKeySize))
		}
	case len(k.Secret) != SecretSize || !utf8.ValidString(k.Secret):
		errs = append(errs, fmt.Errorf("secret must be exactly %d bytes of UTF-8", SecretSize))
	}
	if !k.Status.Valid() {
		errs = append(errs, errors.New("status must be active, retiring or retired"))
	}
	if k.CreatedAt.IsZero() {
		errs = append(errs, errors.New("created_at is required"))
	}
	return errors.Join(errs...)
}

// ContentEncryption is the key's enc: Enc, or A128CBC-HS256 when empty.
func (k *Key) ContentEncryption() string {
	if k.Enc == "" {
		return jwe.EncA128CBCHS256
	}
	return k.Enc
}

// NeedsFreshness reports whether every envelope under the key must name iat
// and jti: an A256GCM key, or one made with RequireFresh.
func (k *Key) NeedsFreshness() bool {
	return k.RequireFresh || k.ContentEncryption() == jwe.EncA256GCM
}

// FromContract returns the key the backend's key plane handed, validated:
// its envelopes must be of a content encryption the edge opens.
func FromContract(c contract.ClientKey) (*Key, error) {
	k := &Key{Kid: c.Kid, ClientID: c.ClientID, Secret: c.Secret, Status: c.Status, CreatedAt: c.CreatedAt,
		RetiringAt: c.RetiringAt, RetiredAt: c.RetiredAt, Enc: c.Enc, RequireFresh: c.RequireFresh}
	if c.Enc == "" {
		return nil, fmt.Errorf("key %q: no content encryption", c.Kid)
	}
	if err := k.Validate(); err != nil {
		return nil, fmt.Errorf("key %q: %w", c.Kid, err)
	}
	return k, nil
}

// Registry is an immutable, validated view of a registry file, safe for
// concurrent use.
type Registry struct {
	keys  []Key
	byKid map[string]*Key
	// dataKey is the file's data key, wrapped; nil for plain secrets.
	dataKey *wrappedKey
	// plain counts the keys stored with a plain secret.
	plain int
	// unavailable are the kids whose sealed secret did not open.
	unavailable []string
}

// Parse decodes and validates a registry file, opening its sealed secrets
// with s (nil when there is no keeper: then only a file of plain secrets
// is read). Member names must be exact (case included), no member may
// repeat at any depth, unknown members are refused, and the keys member
// must be there (an empty registry is {"keys":[]}): a misspelt, doubled or
// missing field cannot silently change a key or empty the registry. A
// sealed secret that does not open makes its key unavailable, not the file
// invalid (Unavailable).
func Parse(data []byte, s *Sealer) (*Registry, error) {
	f, err := parseForm(data)
	if err != nil {
		return nil, err
	}
	return f.registry(s)
}

// parseForm decodes a registry file as stored.
func parseForm(data []byte) (*fileForm, error) {
	var f fileForm
	if err := strictjson.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("registry is not valid JSON of the expected shape: %w", err)
	}
	if f.Keys == nil {
		return nil, errors.New(`registry has no "keys" member (an empty registry is {"keys":[]})`)
	}
	return &f, nil
}

// New validates f and returns its registry.
func New(f File) (*Registry, error) {
	r := &Registry{keys: f.Keys}
	return r, r.index()
}

// index validates r's keys and indexes them by kid.
func (r *Registry) index() error {
	if err := (&File{Keys: r.keys}).Validate(); err != nil {
		return err
	}
	r.byKid = make(map[string]*Key, len(r.keys))
	for i := range r.keys {
		r.byKid[r.keys[i].Kid] = &r.keys[i]
	}
	return nil
}

// Plain returns how many keys the file held with a plain secret: a file
// of an earlier version, which the next write (or hdc keys wrap) seals.
func (r *Registry) Plain() int { return r.plain }

// Unavailable returns the kids whose sealed secret did not open, in file
// order: their requests are refused.
func (r *Registry) Unavailable() []string { return append([]string(nil), r.unavailable...) }

// Lookup returns the key named kid, whatever its status. The result must not
// be modified.
func (r *Registry) Lookup(kid string) (*Key, bool) {
	k, ok := r.byKid[kid]
	return k, ok
}

// Keys returns a copy of every key, in file order.
func (r *Registry) Keys() []Key { return append([]Key(nil), r.keys...) }

// Len returns the number of keys.
func (r *Registry) Len() int { return len(r.keys) }
