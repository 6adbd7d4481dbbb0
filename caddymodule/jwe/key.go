package jwe

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	"io"
	"sync"
	"unicode/utf8"
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
	macs  sync.Pool // of hash.Hash: HMAC-SHA-256 states under the MAC key
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

// startTag begins an authentication tag (RFC 7518 §5.2.2.1): HMAC-SHA-256
// under the MAC key over the additional authenticated data, the iv, then the
// ciphertext, which the caller writes to the returned hash before endTag.
// The HMAC states are pooled: the edge computes two tags per request.
func (k *Key) startTag(aad string, iv []byte) hash.Hash {
	mac, ok := k.macs.Get().(hash.Hash)
	if ok {
		mac.Reset()
	} else {
		mac = hmac.New(sha256.New, k.macKey())
	}
	_, _ = io.WriteString(mac, aad)
	mac.Write(iv)
	return mac
}

// endTag absorbs the length in bits of the additional authenticated data,
// puts the tag (the first half of the HMAC) in tag, and gives the HMAC state
// back to the pool.
func (k *Key) endTag(mac hash.Hash, aadLen int, tag *[tagSize]byte) {
	var buf [sha256.Size]byte
	binary.BigEndian.PutUint64(buf[:8], uint64(aadLen)*8)
	mac.Write(buf[:8])
	copy(tag[:], mac.Sum(buf[:0]))
	k.macs.Put(mac)
}
