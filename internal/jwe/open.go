package jwe

import (
	"io"

	"github.com/health-data-connect/hdc/internal/jwe/cbchmac"
)

// Open authenticates the envelope's ciphertext, read from ct (Size bytes
// from offset 0), and returns a reader of its plaintext (cbchmac.Key.Open):
// nothing is decrypted before the tag is verified. Every failure is
// ErrDecrypt.
func (e *Envelope) Open(k *cbchmac.Key, ct io.ReaderAt) (*cbchmac.Plaintext, error) {
	p, err := k.Open(&e.Sealed, ct)
	return p, decryptErr(err)
}

// Decrypt opens an envelope whose ciphertext is in memory and returns the
// whole plaintext.
func (e *Envelope) Decrypt(k *cbchmac.Key, ct []byte) ([]byte, error) {
	pt, err := k.Decrypt(&e.Sealed, ct)
	return pt, decryptErr(err)
}

// DecryptInPlace is Decrypt without the copy: the plaintext is decrypted
// over ct, and the returned slice shares ct's memory.
func (e *Envelope) DecryptInPlace(k *cbchmac.Key, ct []byte) ([]byte, error) {
	pt, err := k.DecryptInPlace(&e.Sealed, ct)
	return pt, decryptErr(err)
}

// decryptErr names cbchmac.ErrDecrypt as this package's ErrDecrypt.
func decryptErr(err error) error {
	if err == cbchmac.ErrDecrypt {
		return ErrDecrypt
	}
	return err
}
