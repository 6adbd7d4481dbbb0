package clientkey

import (
	"cmp"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"fmt"
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

// Kind is what a key is besides its secret and dates: the content
// encryption of its envelopes, and whether they must be fresh (name iat
// and jti), as NeedsFreshness says.
type Kind struct {
	Enc   string
	Fresh bool
}

// Kind returns k's kind.
func (k *Key) Kind() Kind { return Kind{Enc: k.ContentEncryption(), Fresh: k.NeedsFreshness()} }

// String writes the kind as operators read it: "A256GCM" or
// "A128CBC-HS256", with ", fresh" when an A128CBC-HS256 key's envelopes
// must be fresh (an A256GCM key's always must).
func (k Kind) String() string {
	if k.Fresh && k.Enc != jwe.EncA256GCM {
		return k.Enc + ", fresh"
	}
	return k.Enc
}

// What a key may lose against the key it replaces (Kind.Lost), as the
// audit trail records it.
const (
	// LostEnc: A256GCM's content encryption for A128CBC-HS256's.
	LostEnc = "enc"
	// LostFreshness: envelopes that must be fresh for envelopes that need
	// not, which are no longer checked for replays.
	LostFreshness = "freshness"
)

// Lost returns what a key of kind to gives up against one of kind from:
// LostEnc when from is A256GCM and to is not, LostFreshness when from's
// envelopes must be fresh and to's need not; none when to is as strong.
func (from Kind) Lost(to Kind) []string {
	var lost []string
	if from.Enc == jwe.EncA256GCM && to.Enc != jwe.EncA256GCM {
		lost = append(lost, LostEnc)
	}
	if from.Fresh && !to.Fresh {
		lost = append(lost, LostFreshness)
	}
	return lost
}

// Replaced returns the key whose kind a rotation of the client of keys
// keeps: its newest active key, else its newest key; false when keys is
// empty.
func Replaced(keys []Key) (Key, bool) {
	var newest Key
	for i, k := range keys {
		switch active, was := k.Status == Active, newest.Status == Active; {
		case i == 0, active && !was, active == was && k.CreatedAt.After(newest.CreatedAt):
			newest = k
		}
	}
	return newest, len(keys) > 0
}

// ErrStaleGCM refuses a key of A256GCM whose envelopes need not be fresh,
// which there is not: every A256GCM envelope names iat and jti.
var ErrStaleGCM = errors.New("an A256GCM key's envelopes always name iat and jti: only an A128CBC-HS256 key may do without")

// NextKind returns the kind of a rotation's new key for the client of keys:
// the kind of the key it replaces (Replaced), with enc and fresh where
// the operator names them ("" and nil keep it). An A256GCM key's
// envelopes are always fresh (ErrStaleGCM when fresh says otherwise);
// naming A128CBC-HS256 for a client of A256GCM keys keeps freshness
// unless fresh says otherwise.
func NextKind(keys []Key, enc string, fresh *bool) (Kind, error) {
	kind := Kind{Enc: jwe.EncA128CBCHS256}
	if r, ok := Replaced(keys); ok {
		kind = r.Kind()
	}
	if enc != "" {
		kind.Enc = enc
	}
	if fresh != nil {
		kind.Fresh = *fresh
	}
	if !kind.Fresh && kind.Enc == jwe.EncA256GCM {
		if fresh != nil {
			return kind, ErrStaleGCM
		}
		kind.Fresh = true
	}
	return kind, nil
}

// WeakerError refuses a rotation whose new key is of a weaker kind than the
// key it replaces, which the operator did not allow.
type WeakerError struct {
	Replaced string // the kid of the key replaced
	From, To Kind
	Lost     []string
}

// Error says what the client would lose.
func (e *WeakerError) Error() string {
	return fmt.Sprintf("the new key would be %s where the key it replaces, %s, is %s: %s; allow it explicitly to rotate to a weaker key",
		e.To, e.Replaced, e.From, LossText(e.Lost))
}

// LossText says in words what a client loses (Kind.Lost).
func LossText(lost []string) string {
	var says []string
	for _, l := range lost {
		switch l {
		case LostEnc:
			says = append(says, "its envelopes would be A128CBC-HS256, not A256GCM")
		case LostFreshness:
			says = append(says, "its envelopes would no longer be checked for replays (iat and jti not required)")
		}
	}
	return strings.Join(says, ", and ")
}

// Rotated is what a rotation changed.
type Rotated struct {
	// Changed are the client's keys moved to retiring.
	Changed []Key
	// Added is the new key as it is to be stored.
	Added Key
	// Lost is what Added gives up against the key it replaced, which the
	// operator allowed; none for a key as strong.
	Lost []string
}

// Rotate is the rotation rule: next becomes the client's active key, made
// at now, and every active key of the client's keys becomes retiring at
// now, still accepted until an operator retires it. A next of a weaker kind
// than the key it replaces (Replaced: A256GCM for A128CBC-HS256, fresh
// for not) is refused with a *WeakerError unless weaken; Rotated.Lost then
// says what it gives up. ErrNoKeys when keys is empty.
func Rotate(keys []Key, next Key, weaken bool, now time.Time) (Rotated, error) {
	replaced, ok := Replaced(keys)
	if !ok {
		return Rotated{}, ErrNoKeys
	}
	lost := replaced.Kind().Lost(next.Kind())
	if len(lost) > 0 && !weaken {
		return Rotated{}, &WeakerError{Replaced: replaced.Kid, From: replaced.Kind(), To: next.Kind(), Lost: lost}
	}
	now = now.UTC()
	var r Rotated
	for _, k := range keys {
		if k.Status == Active {
			k.Status, k.RetiringAt = Retiring, now
			r.Changed = append(r.Changed, k)
		}
	}
	next.Status, next.CreatedAt = Active, now
	r.Added, r.Lost = next, lost
	return r, nil
}

// LockOutError refuses the retirement of a client's last active key, or of
// its last key at all, which the operator did not force.
type LockOutError struct {
	Kid, Client string
	// Active: the key is the client's last active key; else its last
	// retiring one, none being active.
	Active bool
	// Retiring counts the client's other keys still accepted (retiring).
	Retiring int
}

// Error says what the client would lose.
func (e *LockOutError) Error() string {
	what, loses := "the last active key", "every encrypted request of the client would be refused"
	switch {
	case !e.Active:
		what = "the last key, retiring, that"
	case e.Retiring > 0:
		loses = fmt.Sprintf("the client would have no active key to encrypt with, and its requests would be refused once its %d retiring keys are", e.Retiring)
	}
	return fmt.Sprintf("%s is %s client %s may use: retired, %s; rotate first, or force the retirement", e.Kid, what, e.Client, loses)
}

// CheckRetire is the retirement's guard: it returns a *LockOutError when
// the key kid is the last active key of the client of keys (its keys),
// which a rotation should replace first, or, none being active, the last
// key the client may use; nil for any other key.
func CheckRetire(keys []Key, kid string) error {
	var target *Key
	active, retiring := 0, 0
	for i, k := range keys {
		switch {
		case k.Kid == kid:
			target = &keys[i]
		case k.Status == Active:
			active++
		case k.Status == Retiring:
			retiring++
		}
	}
	switch {
	case target == nil || active > 0 || target.Status == Retired:
		return nil
	case target.Status == Retiring && retiring > 0:
		return nil
	}
	return &LockOutError{Kid: kid, Client: target.ClientID, Active: target.Status == Active, Retiring: retiring}
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
