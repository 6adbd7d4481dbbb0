// Package registryfile is the key registry file of a standalone edge:
// which key id (kid) names which shared key, of which content encryption
// and freshness rule, which client owns it, and where it is in its
// rotation (clientkey.Key), each secret sealed under the file's data key,
// which a keeper wraps.
//
// The registry lives in one JSON file that operators change with the hdc CLI
// (atomic writes under a lock) and that the edge polls and swaps in without a
// restart, keeping the last good version when a new one is invalid.
package registryfile

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/strictjson"
)

// Entry is one key of the registry, its secret opened.
type Entry struct {
	clientkey.Key
	// sealed is the secret as the file held it sealed, kept for a key whose
	// secret did not open, so that writing the file loses nothing.
	sealed string
}

// Available reports whether the key's secret is known: false when its
// sealed form did not open (altered, or copied from another kid).
func (k *Entry) Available() bool { return k.Secret != "" || k.sealed == "" }

// File is the registry's keys as a command edits them (Update).
type File struct {
	Keys []Entry
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

// Validate checks the rules of one entry: a key's (clientkey.Key.Validate),
// and a secret, unless a sealed one did not open. Its errors never include
// the secret.
func (k *Entry) Validate() error {
	err := k.Key.Validate()
	if k.Secret == "" && k.sealed == "" {
		err = errors.Join(err, errors.New("secret or sealed_secret is required"))
	}
	return err
}

// Registry is an immutable, validated view of a registry file, safe for
// concurrent use.
type Registry struct {
	keys  []Entry
	byKid map[string]*Entry
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
		return nil, fmt.Errorf("registry is not valid JSON of the expected shape: %w", inEntry(data, err))
	}
	if f.Keys == nil {
		return nil, errors.New(`registry has no "keys" member (an empty registry is {"keys":[]})`)
	}
	return &f, nil
}

// inEntry returns err, strictjson's refusal of the registry file data,
// naming the entry at fault when one of the keys is on its own: strictjson
// names a member, not which of the keys holds it. Only a refused file is
// read again, entry by entry.
func inEntry(data []byte, err error) error {
	var f struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if json.Unmarshal(data, &f) != nil {
		return err
	}
	for i, entry := range f.Keys {
		var st storedKey
		if e := strictjson.Unmarshal(entry, &st); e != nil {
			return fmt.Errorf("key %d: %w", i, e)
		}
	}
	return err
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
	r.byKid = make(map[string]*Entry, len(r.keys))
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
func (r *Registry) Lookup(kid string) (*Entry, bool) {
	k, ok := r.byKid[kid]
	return k, ok
}

// Keys returns a copy of every key, in file order.
func (r *Registry) Keys() []Entry { return append([]Entry(nil), r.keys...) }

// Len returns the number of keys.
func (r *Registry) Len() int { return len(r.keys) }
