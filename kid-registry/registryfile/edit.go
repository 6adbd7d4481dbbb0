package registryfile

import (
	"fmt"
	"time"

	"github.com/health-data-connect/hdc/internal/clientkey"
)

// Add appends an active key for clientID, of content encryption enc (""
// for A128CBC-HS256) and requiring fresh envelopes when requireFresh. An
// empty kid or secret is generated. The new key is returned.
func (f *File) Add(clientID, kid, secret, enc string, requireFresh bool, now time.Time) (Key, error) {
	k := clientkey.New(clientID, kid, secret, enc, requireFresh, now)
	for _, e := range f.Keys {
		if e.Kid == k.Kid {
			return Key{}, fmt.Errorf("kid %q already exists", k.Kid)
		}
	}
	f.Keys = append(f.Keys, Key{Key: k})
	return f.Keys[len(f.Keys)-1], nil
}

// Rotate gives clientID a new active key and moves its previous active keys
// to retiring, where they are still accepted until an operator retires them
// (clientkey.Rotate).
func (f *File) Rotate(clientID string, now time.Time) (Key, error) {
	var keys []clientkey.Key
	for _, k := range f.Keys {
		if k.ClientID == clientID {
			keys = append(keys, k.Key)
		}
	}
	changed, next, err := clientkey.Rotate(keys, clientkey.New(clientID, "", "", "", false, now), now)
	if err != nil {
		return Key{}, fmt.Errorf("client %q has no keys: add one with hdc keys add", clientID)
	}
	for _, c := range changed {
		f.key(c.Kid).Key = c
	}
	return f.Add(clientID, next.Kid, next.Secret, next.Enc, next.RequireFresh, now)
}

// Retire moves the key kid to retired; requests encrypted with it are then
// refused (clientkey.Retire).
func (f *File) Retire(kid string, now time.Time) error {
	k := f.key(kid)
	if k == nil {
		return fmt.Errorf("no key with kid %q", kid)
	}
	k.Key, _ = clientkey.Retire(k.Key, now)
	return nil
}

// key returns the entry of kid, nil when there is none.
func (f *File) key(kid string) *Key {
	for i := range f.Keys {
		if f.Keys[i].Kid == kid {
			return &f.Keys[i]
		}
	}
	return nil
}
