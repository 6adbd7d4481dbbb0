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
	"github.com/health-data-connect/hdc/internal/strictjson"
)

// SecretSize is the length in bytes of a shared key string: A128CBC-HS256
// takes 32 key bytes and the specification makes them the string twice.
const SecretSize = 16

// Status is where a key is in its rotation.
type Status string

const (
	// Active keys are accepted and are what a client should encrypt with.
	Active Status = "active"
	// Retiring keys are still accepted, for the grace period of a rotation.
	Retiring Status = "retiring"
	// Retired keys are refused.
	Retired Status = "retired"
)

// Key is one entry of the registry.
type Key struct {
	Kid        string     `json:"kid"`
	ClientID   string     `json:"client_id"`
	Secret     string     `json:"secret"`
	Status     Status     `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	RetiringAt *time.Time `json:"retiring_at,omitempty"`
	RetiredAt  *time.Time `json:"retired_at,omitempty"`
}

// Usable reports whether requests encrypted with the key are accepted.
func (k *Key) Usable() bool { return k.Status == Active || k.Status == Retiring }

// Listed is a key without its secret, as the operator's list and the
// edge's admin API show it.
type Listed struct {
	Kid        string     `json:"kid"`
	ClientID   string     `json:"client_id"`
	Status     Status     `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	RetiringAt *time.Time `json:"retiring_at,omitempty"`
	RetiredAt  *time.Time `json:"retired_at,omitempty"`
}

// Listed returns the key without its secret.
func (k *Key) Listed() Listed {
	return Listed{Kid: k.Kid, ClientID: k.ClientID, Status: k.Status, CreatedAt: k.CreatedAt,
		RetiringAt: k.RetiringAt, RetiredAt: k.RetiredAt}
}

// File is the on-disk form of the registry.
type File struct {
	Keys []Key `json:"keys"`
}

// Validate checks every rule of the file format. Its errors name the key by
// kid and never include a secret.
func (f *File) Validate() error {
	seen := make(map[string]bool, len(f.Keys))
	var errs []error
	for i := range f.Keys {
		k := &f.Keys[i]
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("key %d (%q): %s", i, k.Kid, fmt.Sprintf(format, args...)))
		}
		switch {
		case !contract.ValidKid(k.Kid):
			bad("kid must be 1 to 128 characters of A-Z a-z 0-9 . _ : -")
		case seen[k.Kid]:
			bad("duplicate kid")
		}
		seen[k.Kid] = true
		if k.ClientID == "" || len(k.ClientID) > 256 || !utf8.ValidString(k.ClientID) {
			bad("client_id must be 1 to 256 bytes of UTF-8")
		}
		if len(k.Secret) != SecretSize || !utf8.ValidString(k.Secret) {
			bad("secret must be exactly %d bytes of UTF-8", SecretSize)
		}
		switch k.Status {
		case Active, Retiring, Retired:
		default:
			bad("status must be active, retiring or retired")
		}
		if k.CreatedAt.IsZero() {
			bad("created_at is required")
		}
	}
	return errors.Join(errs...)
}

// Registry is an immutable, validated view of a registry file, safe for
// concurrent use.
type Registry struct {
	keys  []Key
	byKid map[string]*Key
}

// Parse decodes and validates a registry file. Member names must be exact
// (case included), no member may repeat at any depth, unknown members are
// refused, and the keys member must be there (an empty registry is
// {"keys":[]}): a misspelt, doubled or missing field cannot silently change
// a key or empty the registry.
func Parse(data []byte) (*Registry, error) {
	var f File
	if err := strictjson.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("registry is not valid JSON of the expected shape: %w", err)
	}
	if f.Keys == nil {
		return nil, errors.New(`registry has no "keys" member (an empty registry is {"keys":[]})`)
	}
	return New(f)
}

// New validates f and returns its registry.
func New(f File) (*Registry, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	r := &Registry{keys: f.Keys, byKid: make(map[string]*Key, len(f.Keys))}
	for i := range r.keys {
		r.byKid[r.keys[i].Kid] = &r.keys[i]
	}
	return r, nil
}

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
