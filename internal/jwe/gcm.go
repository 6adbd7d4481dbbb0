package jwe

import (
	"crypto/cipher"
	"crypto/rand"
)

// GCMNonceSize is the length in bytes of an A256GCM envelope's iv (RFC 7518
// §5.3).
const GCMNonceSize = 12

// sealGCM encrypts plaintext under aead with a random nonce, the
// additional authenticated data being aad, and returns the nonce, the
// ciphertext and the tag (RFC 7518 §5.3).
func sealGCM(aead cipher.AEAD, aad string, plaintext []byte) (iv, ct, tag []byte) {
	iv = make([]byte, GCMNonceSize)
	_, _ = rand.Read(iv)
	out := aead.Seal(make([]byte, 0, len(plaintext)+aead.Overhead()), iv, plaintext, []byte(aad))
	n := len(out) - aead.Overhead()
	return iv, out[:n:n], out[n:]
}

// openGCM authenticates and decrypts ct, the envelope's ciphertext: in its
// own memory when inPlace, if it has room after it for the tag, which
// crypto/cipher wants right after the ciphertext.
func (e *Envelope) openGCM(aead cipher.AEAD, ct []byte, inPlace bool) ([]byte, error) {
	var sealed []byte
	if inPlace && cap(ct)-len(ct) >= len(e.Tag) {
		sealed = append(ct, e.Tag[:]...)
	} else {
		sealed = append(append(make([]byte, 0, len(ct)+len(e.Tag)), ct...), e.Tag[:]...)
	}
	pt, err := aead.Open(sealed[:0], e.nonce[:], sealed, []byte(e.AAD))
	if err != nil {
		return nil, ErrDecrypt
	}
	return pt, nil
}
