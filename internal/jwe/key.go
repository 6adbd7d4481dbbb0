package jwe

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"unicode/utf8"

	"github.com/health-data-connect/hdc/internal/jwe/cbchmac"
)

// Algorithm identifiers of the transport. They form the allow-list that
// envelopes are checked against; adding a method means adding it here and
// teaching NewKeyFor about it.
const (
	AlgDir          = "dir"
	EncA128CBCHS256 = "A128CBC-HS256"
	EncA256GCM      = "A256GCM"
	// SharedKeySize is the length in bytes of a shared key string for
	// A128CBC-HS256.
	SharedKeySize = cbchmac.KeySize / 2
	// GCMKeySize is the length in bytes of an A256GCM key.
	GCMKeySize = 32
)

// ErrKeySize reports a shared key string that is not exactly SharedKeySize
// bytes of UTF-8, or an A256GCM key that is not GCMKeySize bytes in
// base64url.
var ErrKeySize = errors.New("jwe: shared key must be exactly 16 bytes of UTF-8 (A128CBC-HS256) or 32 bytes in base64url (A256GCM)")

// ErrDecrypt is the single error for every cryptographic failure of
// opening an envelope: the tag does not verify, the padding is bad, the
// envelope's enc is not its key's. It stands for cbchmac.ErrDecrypt, under
// the name a user of the transport knows.
var ErrDecrypt = errors.New("jwe: decryption failed")

// CEK is a content-encryption key of the transport (RFC 7516's CEK: with
// alg "dir", the shared key itself) with its content encryption:
// A128CBC-HS256 (package cbchmac) or A256GCM (crypto/cipher's AES-GCM).
// It is safe for concurrent use.
type CEK struct {
	enc string
	cbc *cbchmac.Key
	gcm cipher.AEAD
}

// Enc is the key's content encryption, the enc of its envelopes.
func (k *CEK) Enc() string { return k.enc }

// NewKey derives the A128CBC-HS256 content-encryption key from a shared key
// string as the specification says: the UTF-8 bytes of the string
// concatenated with itself. The string must be exactly 16 bytes long, so the
// MAC key equals the AES key; see docs/security.md.
func NewKey(shared string) (*CEK, error) {
	if len(shared) != SharedKeySize || !utf8.ValidString(shared) {
		return nil, ErrKeySize
	}
	cbc, err := cbchmac.NewKey([]byte(shared + shared))
	if err != nil {
		return nil, err
	}
	return &CEK{enc: EncA128CBCHS256, cbc: cbc}, nil
}

// NewKeyFor returns the key of content encryption enc whose secret is
// secret, as a client key stores it: the shared key string for
// A128CBC-HS256 (NewKey), the unpadded base64url of 32 random bytes (a JWK's
// "k") for A256GCM.
func NewKeyFor(enc, secret string) (*CEK, error) {
	switch enc {
	case EncA128CBCHS256:
		return NewKey(secret)
	case EncA256GCM:
		raw, err := b64.DecodeString(secret)
		if err != nil || len(raw) != GCMKeySize {
			return nil, ErrKeySize
		}
		return newGCMKey(raw)
	}
	return nil, errors.New("jwe: unsupported content encryption " + enc)
}

func newGCMKey(raw []byte) (*CEK, error) {
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &CEK{enc: EncA256GCM, gcm: gcm}, nil
}

// NewGCMSecret returns a new A256GCM secret: 32 random bytes, in unpadded
// base64url.
func NewGCMSecret() string {
	raw := make([]byte, GCMKeySize)
	_, _ = rand.Read(raw)
	return b64.EncodeToString(raw)
}

// DummyKey returns a key of content encryption enc that nobody holds: an
// envelope naming a key that is unknown, not the client's or of another
// enc is opened with it, so that every failure costs the same work and
// fails alike.
func DummyKey(enc string) *CEK {
	if enc == EncA256GCM {
		raw := make([]byte, GCMKeySize)
		_, _ = rand.Read(raw)
		k, _ := newGCMKey(raw)
		return k
	}
	return &CEK{enc: EncA128CBCHS256, cbc: cbchmac.DummyKey()}
}

// ValidEnc reports whether enc is a content encryption of the transport.
func ValidEnc(enc string) bool { return enc == EncA128CBCHS256 || enc == EncA256GCM }
