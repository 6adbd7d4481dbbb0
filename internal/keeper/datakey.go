package keeper

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
)

// KeySize is a data key's length in bytes (AES-256).
const KeySize = 32

// sealedPrefix starts every sealed value, which is
// hdc1.<data key id>.<base64url of nonce, ciphertext and tag>.
const sealedPrefix = "hdc1."

// ErrOpen is every failure to open a sealed value: not sealed, sealed under
// another data key, altered, or bound to another place.
var ErrOpen = errors.New("the sealed value does not open under this data key and binding")

// DataKey seals and opens secrets locally. It is wrapped by a keeper when
// stored (Keeper.Wrap) and never stored otherwise.
type DataKey struct {
	id   string
	raw  [KeySize]byte
	aead cipher.AEAD
}

// NewDataKey returns a fresh random data key with a fresh id.
func NewDataKey() *DataKey {
	var id [8]byte
	raw := make([]byte, KeySize)
	rand.Read(id[:])
	rand.Read(raw)
	return newDataKey(hex.EncodeToString(id[:]), raw)
}

func newDataKey(id string, raw []byte) *DataKey {
	d := &DataKey{id: id}
	copy(d.raw[:], raw)
	block, err := aes.NewCipher(d.raw[:])
	if err != nil {
		panic("keeper: " + err.Error()) // a 32-byte key always makes a cipher
	}
	d.aead, err = cipher.NewGCM(block)
	if err != nil {
		panic("keeper: " + err.Error())
	}
	return d
}

// ID returns the data key's id, which its sealed values name.
func (d *DataKey) ID() string { return d.id }

// Seal returns plain sealed under d and bound to binding: the place it is
// stored (a table and a row id, a kid and its client). Opening it with
// another binding fails.
func (d *DataKey) Seal(plain []byte, binding ...string) string {
	nonce := make([]byte, d.aead.NonceSize(), d.aead.NonceSize()+len(plain)+d.aead.Overhead())
	rand.Read(nonce)
	out := d.aead.Seal(nonce, nonce, plain, d.ad(binding))
	return sealedPrefix + d.id + "." + base64.RawURLEncoding.EncodeToString(out)
}

// Open returns the plaintext of sealed, which Seal made under d with the
// same binding, or ErrOpen.
func (d *DataKey) Open(sealed string, binding ...string) ([]byte, error) {
	id, body, ok := strings.Cut(strings.TrimPrefix(sealed, sealedPrefix), ".")
	if !IsSealed(sealed) || !ok || id != d.id {
		return nil, ErrOpen
	}
	b, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(b) < d.aead.NonceSize()+d.aead.Overhead() {
		return nil, ErrOpen
	}
	n := d.aead.NonceSize()
	plain, err := d.aead.Open(nil, b[:n], b[n:], d.ad(binding))
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}

// ad is the associated data of a binding: the data key's id and the
// binding's parts, each after its length, so that no two bindings share
// one.
func (d *DataKey) ad(binding []string) []byte {
	b := []byte("hdc-sealed-v1")
	for _, part := range append([]string{d.id}, binding...) {
		b = binary.AppendUvarint(b, uint64(len(part)))
		b = append(b, part...)
	}
	return b
}

// Derive returns a key for purpose derived from d (HKDF-SHA-256): the key
// of the audit trail's MACs is one. It stays the same when the data key is
// rewrapped under another keeper.
func (d *DataKey) Derive(purpose string) []byte {
	k, err := hkdf.Key(sha256.New, d.raw[:], nil, "hdc "+purpose, sha256.Size)
	if err != nil {
		panic("keeper: " + err.Error()) // 32 bytes of SHA-256 are always derivable
	}
	return k
}

// IsSealed reports whether s has the form of a sealed value; a secret
// stored before sealing (a plain one) does not.
func IsSealed(s string) bool { return strings.HasPrefix(s, sealedPrefix) }
