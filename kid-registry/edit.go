package kidregistry

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// NewSecret returns a random shared key string: 16 characters of the
// base64url alphabet, 96 bits from crypto/rand. The string is the key
// material (the specification doubles it), so it must be printable text.
func NewSecret() string {
	b := make([]byte, SecretSize*3/4)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewKid returns a random key id.
func NewKid() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return "k_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// Add appends an active key for clientID. An empty kid or secret is
// generated. The new key is returned.
func (f *File) Add(clientID, kid, secret string, now time.Time) (Key, error) {
	if kid == "" {
		kid = NewKid()
	}
	if secret == "" {
		secret = NewSecret()
	}
	for _, k := range f.Keys {
		if k.Kid == kid {
			return Key{}, fmt.Errorf("kid %q already exists", kid)
		}
	}
	k := Key{Kid: kid, ClientID: clientID, Secret: secret, Status: Active, CreatedAt: now.UTC()}
	f.Keys = append(f.Keys, k)
	return k, nil
}

// Rotate gives clientID a new active key and moves its previous active keys
// to retiring, where they are still accepted until an operator retires them.
func (f *File) Rotate(clientID string, now time.Time) (Key, error) {
	found := false
	for i := range f.Keys {
		k := &f.Keys[i]
		if k.ClientID != clientID {
			continue
		}
		found = true
		if k.Status == Active {
			t := now.UTC()
			k.Status, k.RetiringAt = Retiring, &t
		}
	}
	if !found {
		return Key{}, fmt.Errorf("client %q has no keys: add one with hdc keys add", clientID)
	}
	return f.Add(clientID, "", "", now)
}

// Retire moves the key kid to retired; requests encrypted with it are then
// refused.
func (f *File) Retire(kid string, now time.Time) error {
	for i := range f.Keys {
		k := &f.Keys[i]
		if k.Kid != kid {
			continue
		}
		if k.Status != Retired {
			t := now.UTC()
			k.Status, k.RetiredAt = Retired, &t
		}
		return nil
	}
	return fmt.Errorf("no key with kid %q", kid)
}
