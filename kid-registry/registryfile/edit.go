package registryfile

import (
	"errors"
	"fmt"
	"time"

	"github.com/health-data-connect/hdc/internal/clientkey"
)

// The refusals of the edits, besides the rules' (clientkey's
// *WeakerError, *LockOutError and ErrNoKeys, which Rotate wraps).
var (
	// ErrKidTaken: the kid Add was given is another key's.
	ErrKidTaken = errors.New("registryfile: the kid is taken")
	// ErrNoKey: the kid Retire was given is no key's.
	ErrNoKey = errors.New("registryfile: no such key")
)

// Add appends an active key for clientID, of content encryption enc (""
// for A128CBC-HS256) and requiring fresh envelopes when requireFresh. An
// empty kid or secret is generated. The new key is returned; a kid the
// file has already is ErrKidTaken.
func (f *File) Add(clientID, kid, secret, enc string, requireFresh bool, now time.Time) (Entry, error) {
	k := clientkey.New(clientID, kid, secret, enc, requireFresh, now)
	for _, e := range f.Keys {
		if e.Kid == k.Kid {
			return Entry{}, fmt.Errorf("kid %q: %w", k.Kid, ErrKidTaken)
		}
	}
	f.Keys = append(f.Keys, Entry{Key: k})
	return f.Keys[len(f.Keys)-1], nil
}

// Rotate gives clientID a new active key, of the kind of the key it
// replaces unless enc or fresh name another ("" and nil keep it), and
// moves its previous active keys to retiring, where they are still
// accepted until an operator retires them (clientkey.NextKind,
// clientkey.Rotate): a new key weaker than the one it replaces is refused
// with a *clientkey.WeakerError unless weaken, that of a client without
// keys with clientkey.ErrNoKeys. It returns the new key and what the
// rotation changed.
func (f *File) Rotate(clientID, enc string, fresh *bool, weaken bool, now time.Time) (Entry, clientkey.Rotated, error) {
	keys := f.clientKeys(clientID)
	kind, err := clientkey.NextKind(keys, enc, fresh)
	if err != nil {
		return Entry{}, clientkey.Rotated{}, err
	}
	r, err := clientkey.Rotate(keys, clientkey.New(clientID, "", "", kind.Enc, kind.Fresh, now), weaken, now)
	if err != nil {
		return Entry{}, r, err
	}
	for _, c := range r.Changed {
		f.key(c.Kid).Key = c
	}
	k, err := f.Add(clientID, r.Added.Kid, r.Added.Secret, r.Added.Enc, r.Added.RequireFresh, now)
	return k, r, err
}

// Retire moves the key kid to retired; requests encrypted with it are then
// refused (clientkey.Retire). The retirement of a client's last active key,
// or of its last key, is refused with a *clientkey.LockOutError unless
// force (clientkey.CheckRetire); a kid the file has not is ErrNoKey.
func (f *File) Retire(kid string, force bool, now time.Time) error {
	k := f.key(kid)
	if k == nil {
		return fmt.Errorf("kid %q: %w", kid, ErrNoKey)
	}
	if !force {
		if err := clientkey.CheckRetire(f.clientKeys(k.ClientID), kid); err != nil {
			return err
		}
	}
	k.Key, _ = clientkey.Retire(k.Key, now)
	return nil
}

// clientKeys returns the keys of clientID.
func (f *File) clientKeys(clientID string) []clientkey.Key {
	var keys []clientkey.Key
	for _, k := range f.Keys {
		if k.ClientID == clientID {
			keys = append(keys, k.Key)
		}
	}
	return keys
}

// key returns the entry of kid, nil when there is none.
func (f *File) key(kid string) *Entry {
	for i := range f.Keys {
		if f.Keys[i].Kid == kid {
			return &f.Keys[i]
		}
	}
	return nil
}
