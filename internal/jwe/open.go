package jwe

import (
	"bytes"
	"io"

	"github.com/health-data-connect/hdc/internal/jwe/cbchmac"
)

// Open authenticates the envelope's ciphertext, read from ct (Size bytes
// from offset 0), and returns a reader of its plaintext and the
// plaintext's length: nothing is decrypted before the tag is verified. An
// A128CBC-HS256 ciphertext is verified and decrypted as a stream
// (cbchmac.Key.Open); an A256GCM one is read into memory first, as
// crypto/cipher's AES-GCM opens only a whole ciphertext. Every failure,
// an envelope whose enc is not k's included, is ErrDecrypt.
func (e *Envelope) Open(k *CEK, ct io.ReaderAt) (io.Reader, int64, error) {
	if e.Header.Enc != k.enc {
		return nil, 0, ErrDecrypt
	}
	if k.gcm != nil {
		buf := make([]byte, e.Size)
		if _, err := ct.ReadAt(buf, 0); err != nil && !(err == io.EOF && int64(len(buf)) == e.Size) {
			return nil, 0, err
		}
		pt, err := e.DecryptInPlace(k, buf)
		return bytes.NewReader(pt), int64(len(pt)), err
	}
	p, err := k.cbc.Open(&e.Sealed, ct)
	if err != nil {
		return nil, 0, decryptErr(err)
	}
	return p, p.Size, nil
}

// Decrypt opens an envelope whose ciphertext is in memory and returns the
// whole plaintext.
func (e *Envelope) Decrypt(k *CEK, ct []byte) ([]byte, error) {
	return e.decrypt(k, ct, false)
}

// DecryptInPlace is Decrypt without the copy: the plaintext is decrypted
// over ct, and the returned slice shares ct's memory (or, for A256GCM, a
// copy of ct with the tag appended when ct has no room for it).
func (e *Envelope) DecryptInPlace(k *CEK, ct []byte) ([]byte, error) {
	return e.decrypt(k, ct, true)
}

func (e *Envelope) decrypt(k *CEK, ct []byte, inPlace bool) ([]byte, error) {
	switch {
	case e.Header.Enc != k.enc || int64(len(ct)) != e.Size:
		return nil, ErrDecrypt
	case k.gcm != nil:
		return e.openGCM(k.gcm, ct, inPlace)
	case inPlace:
		pt, err := k.cbc.DecryptInPlace(&e.Sealed, ct)
		return pt, decryptErr(err)
	}
	pt, err := k.cbc.Decrypt(&e.Sealed, ct)
	return pt, decryptErr(err)
}

// decryptErr names cbchmac.ErrDecrypt as this package's ErrDecrypt.
func decryptErr(err error) error {
	if err == cbchmac.ErrDecrypt {
		return ErrDecrypt
	}
	return err
}
