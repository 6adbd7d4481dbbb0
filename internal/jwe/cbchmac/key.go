package cbchmac

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
)

// Sizes of A128CBC-HS256, in bytes.
const (
	KeySize   = 32 // the content-encryption key: a MAC key, then an AES key
	BlockSize = aes.BlockSize
	IVSize    = aes.BlockSize
	TagSize   = 16 // the HMAC-SHA-256 output truncated to half, RFC 7518 §5.2.3
	macSize   = KeySize / 2
)

// ErrKeySize reports a content-encryption key that is not KeySize bytes.
var ErrKeySize = errors.New("cbchmac: the key must be 32 bytes")

// ErrDecrypt is the single error for every cryptographic failure: a tag
// that does not verify, bad padding, or a ciphertext of the wrong shape. It
// deliberately says nothing about which of them happened.
var ErrDecrypt = errors.New("cbchmac: decryption failed")

// Key is an A128CBC-HS256 content-encryption key: a 16-byte MAC key followed
// by a 16-byte AES key (RFC 7518 §5.2.2.1). It is safe for concurrent use.
type Key struct {
	cek   [KeySize]byte
	block cipher.Block
	macs  sync.Pool // of hash.Hash: HMAC-SHA-256 states under the MAC key
	modes cbcModes
}

// NewKey returns the key for a 32-byte content-encryption key.
func NewKey(cek []byte) (*Key, error) {
	if len(cek) != KeySize {
		return nil, ErrKeySize
	}
	k := &Key{}
	copy(k.cek[:], cek)
	block, err := aes.NewCipher(k.cek[macSize:])
	if err != nil {
		return nil, err
	}
	k.block = block
	return k, nil
}

// DummyKey returns a random key that no client holds. Verifying a
// ciphertext against it costs the same as against a real key and always
// fails, so a caller that does not know a key id can spend the same time as
// one that does.
func DummyKey() *Key {
	var cek [KeySize]byte
	_, _ = rand.Read(cek[:])
	k, _ := NewKey(cek[:])
	return k
}

// startTag begins an authentication tag (RFC 7518 §5.2.2.1): HMAC-SHA-256
// under the MAC key over the additional authenticated data, the iv, then the
// ciphertext, which the caller writes to the returned hash before endTag.
// The HMAC states are pooled: the edge computes two tags per request.
func (k *Key) startTag(aad string, iv []byte) hash.Hash {
	mac, ok := k.macs.Get().(hash.Hash)
	if ok {
		mac.Reset()
	} else {
		mac = hmac.New(sha256.New, k.cek[:macSize])
	}
	_, _ = io.WriteString(mac, aad)
	mac.Write(iv)
	return mac
}

// endTag absorbs the length in bits of the additional authenticated data,
// puts the tag (the first half of the HMAC) in tag, and gives the HMAC state
// back to the pool.
func (k *Key) endTag(mac hash.Hash, aadLen int, tag *[TagSize]byte) {
	var buf [sha256.Size]byte
	binary.BigEndian.PutUint64(buf[:8], uint64(aadLen)*8)
	mac.Write(buf[:8])
	copy(tag[:], mac.Sum(buf[:0]))
	k.macs.Put(mac)
}
