package jwe

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"unicode/utf8"

	josecipher "github.com/go-jose/go-jose/v4/cipher"
)

// Algorithm identifiers of the transport. They form the allow-list that
// envelopes are checked against; adding a method means adding it here and
// teaching Key about it.
const (
	AlgDir           = "dir"
	EncA128CBCHS256  = "A128CBC-HS256"
	SharedKeySize    = 16 // bytes of the shared key string for A128CBC-HS256
	cekSize          = 2 * SharedKeySize
	blockSize        = aes.BlockSize
	ivSize           = aes.BlockSize
	tagSize          = 16 // the HMAC-SHA-256 output truncated to half, RFC 7518 §5.2.3
	macKeySize       = cekSize / 2
	maxHeaderMembers = 16
)

// ErrKeySize reports a shared key string that is not exactly SharedKeySize
// bytes of UTF-8.
var ErrKeySize = errors.New("jwe: shared key must be exactly 16 bytes of UTF-8")

// Key is an A128CBC-HS256 content-encryption key: a 16-byte MAC key followed
// by a 16-byte AES key (RFC 7518 §5.2.2.1). It is safe for concurrent use.
type Key struct {
	cek   [cekSize]byte
	block cipher.Block
	aead  cipher.AEAD // go-jose's A128CBC-HS256, for sealing
}

// NewKey derives the key from a shared key string as the specification says:
// the UTF-8 bytes of the string concatenated with itself. The string must be
// exactly 16 bytes long, so the MAC key equals the AES key; see the README's
// security notes.
func NewKey(shared string) (*Key, error) {
	if len(shared) != SharedKeySize || !utf8.ValidString(shared) {
		return nil, ErrKeySize
	}
	return NewKeyFromCEK([]byte(shared + shared))
}

// NewKeyFromCEK returns the key for a raw 32-byte content-encryption key, as
// used by the RFC test vectors.
func NewKeyFromCEK(cek []byte) (*Key, error) {
	if len(cek) != cekSize {
		return nil, ErrKeySize
	}
	k := &Key{}
	copy(k.cek[:], cek)
	block, err := aes.NewCipher(k.cek[macKeySize:])
	if err != nil {
		return nil, err
	}
	k.block = block
	if k.aead, err = josecipher.NewCBCHMAC(k.cek[:], aes.NewCipher); err != nil {
		return nil, err
	}
	return k, nil
}

// DummyKey returns a random key that no client holds. Verifying an envelope
// against it costs the same as against a real key and always fails, so a
// caller that does not know the kid can spend the same time as one that does.
func DummyKey() *Key {
	var cek [cekSize]byte
	_, _ = rand.Read(cek[:])
	k, _ := NewKeyFromCEK(cek[:])
	return k
}

func (k *Key) macKey() []byte { return k.cek[:macKeySize] }
