package cbchmac

import (
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"hash"
	"io"
)

// sealChunk is how much plaintext a Sealer gathers before it encrypts and
// writes: a multiple of the block size.
const sealChunk = 32 << 10

// ErrSealerClosed reports a write to a Sealer after Close.
var ErrSealerClosed = errors.New("cbchmac: write after Close")

// Sealer encrypts a plaintext written to it in pieces, for one that is too
// large to hold in memory (hdc call's uploads): it writes the ciphertext to
// its destination as whole blocks become available, and its tag is known
// once Close has padded and written the last block. The output is exactly
// Seal's for the same iv; the tests hold it to Seal and to go-jose.
//
// It is composed here from crypto/cipher's CBC mode and crypto/hmac, as Seal
// is, because no library offers it: go-jose's CBC-HMAC (like every
// cipher.AEAD) seals one contiguous buffer and has no streaming interface,
// and a JWE's tag follows its ciphertext, so a stream can carry it last.
//
// A Sealer is not safe for concurrent use.
type Sealer struct {
	k      *Key
	dst    io.Writer
	aadLen int
	iv     [IVSize]byte
	tag    [TagSize]byte
	cbc    cipher.BlockMode
	mac    hash.Hash
	buf    []byte // a chunk, whose first n bytes are plaintext not yet encrypted
	n      int
	err    error // the first error of dst, or ErrSealerClosed
}

// NewSealer returns a Sealer that encrypts under k with a fresh random iv
// and the additional authenticated data aad, writing the ciphertext to dst.
func (k *Key) NewSealer(aad string, dst io.Writer) *Sealer {
	iv := make([]byte, IVSize)
	_, _ = rand.Read(iv)
	return k.newSealerIV(iv, aad, dst, sealChunk)
}

// newSealerIV is NewSealer under a given iv, gathering chunk bytes (a
// multiple of BlockSize) before it writes: the tests vary both.
func (k *Key) newSealerIV(iv []byte, aad string, dst io.Writer, chunk int) *Sealer {
	s := &Sealer{k: k, dst: dst, aadLen: len(aad), buf: make([]byte, chunk)}
	copy(s.iv[:], iv)
	s.cbc = cipher.NewCBCEncrypter(k.block, s.iv[:])
	s.mac = k.startTag(aad, s.iv[:])
	return s
}

// CiphertextSize is the length of the ciphertext of a plaintext of n bytes:
// PKCS #7 padding always adds 1 to BlockSize bytes.
func CiphertextSize(n int64) int64 { return n/BlockSize*BlockSize + BlockSize }

// IV returns the initialization vector the Sealer encrypts under.
func (s *Sealer) IV() []byte { return s.iv[:] }

// Tag returns the authentication tag; it is valid after Close succeeded.
func (s *Sealer) Tag() []byte { return s.tag[:] }

// Write encrypts p. Ciphertext is written to the destination in chunks of
// 32 KiB; the last partial chunk waits for Close.
func (s *Sealer) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if s.err != nil {
			return written, s.err
		}
		c := copy(s.buf[s.n:], p)
		s.n += c
		written += c
		p = p[c:]
		if s.n == len(s.buf) {
			s.flush(s.n)
		}
	}
	return written, s.err
}

// Close pads the plaintext (PKCS #7), encrypts and writes the last blocks,
// and computes the tag. It does not close the destination.
func (s *Sealer) Close() error {
	if s.err != nil {
		return s.err
	}
	end := s.n/BlockSize*BlockSize + BlockSize // s.n < len(s.buf), a multiple of BlockSize
	pad := byte(end - s.n)
	for i := s.n; i < end; i++ {
		s.buf[i] = pad
	}
	s.flush(end)
	if s.err != nil {
		return s.err
	}
	s.k.endTag(s.mac, s.aadLen, &s.tag)
	s.mac, s.err = nil, ErrSealerClosed
	return nil
}

// flush encrypts the first n bytes of the buffer, whole blocks, adds them
// to the tag and writes them.
func (s *Sealer) flush(n int) {
	ct := s.buf[:n]
	s.cbc.CryptBlocks(ct, ct)
	s.mac.Write(ct)
	if _, err := s.dst.Write(ct); err != nil {
		s.err = err
	}
	s.n = 0
}
