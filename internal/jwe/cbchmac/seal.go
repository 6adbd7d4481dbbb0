package cbchmac

import (
	"crypto/rand"
)

// Seal encrypts plaintext under k with a fresh random iv and the additional
// authenticated data aad.
func (k *Key) Seal(aad string, plaintext []byte) (iv, ciphertext, tag []byte) {
	iv = make([]byte, IVSize)
	_, _ = rand.Read(iv)
	ciphertext, tag = k.sealIV(iv, aad, plaintext)
	return iv, ciphertext, tag
}

// sealIV encrypts plaintext under the given iv (RFC 7518 §5.2.2.1): PKCS #7
// padding, AES-128-CBC, then the tag over aad, iv, ciphertext and the length
// of aad. It pads and encrypts in one buffer, which holds the tag too.
func (k *Key) sealIV(iv []byte, aad string, plaintext []byte) (ciphertext, tag []byte) {
	n := len(plaintext)/BlockSize*BlockSize + BlockSize
	out := make([]byte, n+TagSize)
	copy(out, plaintext)
	pad := byte(n - len(plaintext))
	for i := len(plaintext); i < n; i++ {
		out[i] = pad
	}
	ciphertext = out[:n]
	cbc := k.encrypter(iv)
	cbc.CryptBlocks(ciphertext, ciphertext)
	k.putEncrypter(cbc)
	mac := k.startTag(aad, iv)
	mac.Write(ciphertext)
	k.endTag(mac, len(aad), (*[TagSize]byte)(out[n:]))
	return ciphertext, out[n:]
}
