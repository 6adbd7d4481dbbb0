package clientkey

import (
	"cmp"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/health-data-connect/hdc/internal/jwe"
)

// NewSecret returns a random A128CBC-HS256 shared key string: 16
// characters of the base64url alphabet, 96 bits from crypto/rand. The
// string is the key material (the specification doubles it), so it must
// be printable text.
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

// New returns an active key of clientID made at now, of content
// encryption enc ("" for A128CBC-HS256), with kid and secret, or random
// ones when empty. It is not validated.
func New(clientID, kid, secret, enc string, requireFresh bool, now time.Time) Key {
	enc = cmp.Or(enc, jwe.EncA128CBCHS256)
	switch {
	case secret != "":
	case enc == jwe.EncA256GCM:
		secret = jwe.NewGCMSecret()
	default:
		secret = NewSecret()
	}
	return Key{Kid: cmp.Or(kid, NewKid()), ClientID: clientID, Secret: secret, Enc: enc, RequireFresh: requireFresh,
		Status: Active, CreatedAt: now.UTC()}
}

// ErrNoKeys: a rotation of a client that has no key, which must be added
// first.
var ErrNoKeys = errors.New("clientkey: the client has no key")

// Rotate is the rotation rule: next becomes the client's active key, made
// at now, and every active key of the client's keys becomes retiring at
// now, still accepted until an operator retires it. It returns the keys it
// changed, and next as it is to be stored; ErrNoKeys when keys is empty.
func Rotate(keys []Key, next Key, now time.Time) (changed []Key, added Key, err error) {
	if len(keys) == 0 {
		return nil, Key{}, ErrNoKeys
	}
	now = now.UTC()
	for _, k := range keys {
		if k.Status == Active {
			k.Status, k.RetiringAt = Retiring, now
			changed = append(changed, k)
		}
	}
	next.Status, next.CreatedAt = Active, now
	return changed, next, nil
}

// Retire is the retirement rule: k becomes retired at now, and its
// requests are refused. A retired key stays as it was: changed is false.
func Retire(k Key, now time.Time) (retired Key, changed bool) {
	if k.Status == Retired {
		return k, false
	}
	k.Status, k.RetiredAt = Retired, now.UTC()
	return k, true
}
