// Package clientkey is a client's shared encryption key, as every part of
// the gateway knows it: its kid, owner, content encryption, secret,
// freshness rule, status and dates, the rules a key must keep, and the
// rotation rule (rotate.go). The registry file, both database engines, the
// key plane's answer and the edge convert to and from Key; none declares
// a key of its own.
package clientkey

import (
	"errors"
	"fmt"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/health-data-connect/hdc/internal/jwe"
)

// Status is where a key is in its rotation; the key plane, the database
// and the registry file spell it so.
type Status string

const (
	// Active keys are accepted and are what a client should encrypt with.
	Active Status = "active"
	// Retiring keys are still accepted, for the grace period of a rotation.
	Retiring Status = "retiring"
	// Retired keys are refused.
	Retired Status = "retired"
)

// Valid reports whether s is one of the three statuses.
func (s Status) Valid() bool { return s == Active || s == Retiring || s == Retired }

// SecretSize is the length in bytes of an A128CBC-HS256 shared key string:
// the cipher takes 32 key bytes, and the specification makes them the
// string twice.
const SecretSize = 16

// Key is a client's shared key.
type Key struct {
	Kid      string
	ClientID string
	// Secret is the shared key string: an A128CBC-HS256 key's 16
	// characters, or an A256GCM key's JWK "k". Empty where it is not
	// known (a key listed, or a sealed secret that did not open).
	Secret string
	// Enc is the content encryption of the key's envelopes; "" is
	// A128CBC-HS256 (ContentEncryption).
	Enc string
	// RequireFresh: every envelope under the key must name iat and jti
	// (always so for A256GCM keys: NeedsFreshness).
	RequireFresh bool
	Status       Status
	CreatedAt    time.Time
	RetiringAt   time.Time // zero when never retiring
	RetiredAt    time.Time // zero when not retired
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

// Usable reports whether requests encrypted with the key are accepted: its
// secret is known and its status active or retiring.
func (k *Key) Usable() bool {
	return k.Secret != "" && (k.Status == Active || k.Status == Retiring)
}

// kidPattern is the form of a kid (ValidKid).
var kidPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// ValidKid reports whether s may be a key id: 1 to 128 characters of
// A-Z a-z 0-9 . _ : -, so that it is safe in headers, log fields and
// metric labels. Every source of keys refuses any other.
func ValidKid(s string) bool { return kidPattern.MatchString(s) }

// ValidClientID reports whether s may be the client id of a key: 1 to 256
// bytes of UTF-8 (a key may name a client of another installation).
func ValidClientID(s string) bool { return s != "" && len(s) <= 256 && utf8.ValidString(s) }

// Validate checks the rules of one key, wherever it comes from. A key
// without its secret (listed, or sealed and not opened) is checked for
// the rest. Its errors never include the secret.
func (k *Key) Validate() error {
	var errs []error
	if !ValidKid(k.Kid) {
		errs = append(errs, errors.New("kid must be 1 to 128 characters of A-Z a-z 0-9 . _ : -"))
	}
	if !ValidClientID(k.ClientID) {
		errs = append(errs, errors.New("client_id must be 1 to 256 bytes of UTF-8"))
	}
	if err := k.validateSecret(); err != nil {
		errs = append(errs, err)
	}
	if !k.Status.Valid() {
		errs = append(errs, errors.New("status must be active, retiring or retired"))
	}
	if k.CreatedAt.IsZero() {
		errs = append(errs, errors.New("created_at is required"))
	}
	return errors.Join(errs...)
}

// validateSecret checks the enc, and the secret's form for it when the
// secret is known.
func (k *Key) validateSecret() error {
	switch enc := k.ContentEncryption(); {
	case !jwe.ValidEnc(enc):
		return fmt.Errorf("enc must be %s or %s", jwe.EncA128CBCHS256, jwe.EncA256GCM)
	case k.Secret == "":
		return nil
	case enc == jwe.EncA256GCM:
		if _, err := jwe.NewKeyFor(jwe.EncA256GCM, k.Secret); err != nil {
			return fmt.Errorf("an %s secret must be %d bytes in unpadded base64url", jwe.EncA256GCM, jwe.GCMKeySize)
		}
	case len(k.Secret) != SecretSize || !utf8.ValidString(k.Secret):
		return fmt.Errorf("secret must be exactly %d bytes of UTF-8", SecretSize)
	}
	return nil
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
	return Listed{Kid: k.Kid, ClientID: k.ClientID, Enc: k.ContentEncryption(), RequireFresh: k.NeedsFreshness(),
		Status: k.Status, CreatedAt: k.CreatedAt, RetiringAt: TimeOrNil(k.RetiringAt), RetiredAt: TimeOrNil(k.RetiredAt)}
}

// Key returns the key l lists, its secret secret: the inverse of
// Key.Listed, for a store that keeps keys in their listed form (the
// registry file), so that every field it lists, enc and freshness too,
// comes back. A listed form with no enc is of an A128CBC-HS256 key.
func (l *Listed) Key(secret string) Key {
	return Key{Kid: l.Kid, ClientID: l.ClientID, Secret: secret, Enc: l.Enc, RequireFresh: l.RequireFresh,
		Status: l.Status, CreatedAt: l.CreatedAt, RetiringAt: TimeOf(l.RetiringAt), RetiredAt: TimeOf(l.RetiredAt)}
}

// TimeOrNil is t, or nil when t is zero: the form of an optional date in
// JSON.
func TimeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// TimeOf is *t, or the zero time when t is nil.
func TimeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// Change says that the key Kid changed at the key plane's sequence number
// Seq. It carries no key material: an edge that holds the kid looks it up
// again.
type Change struct {
	Kid string `json:"kid"`
	Seq int64  `json:"seq"`
	// Client set with Kid empty says that this client's limits changed:
	// the edge reads them again (contract.PathClientLimits/{client}).
	Client string `json:"client,omitempty"`
}
