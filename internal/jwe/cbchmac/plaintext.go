package cbchmac

import (
	"crypto/cipher"
	"io"
)

// Plaintext streams the plaintext of an opened ciphertext. It decrypts in
// the caller's buffer where it can, so reading costs no copy beyond the read
// of the ciphertext itself.
type Plaintext struct {
	// Size is the length of the plaintext in bytes.
	Size int64

	src     *io.SectionReader
	cbc     cipher.BlockMode
	ctLeft  int64  // ciphertext bytes not yet decrypted
	pad     int    // padding bytes at the end of the last block
	pending []byte // decrypted bytes not yet returned
	block   [BlockSize]byte
}

// Read implements io.Reader.
func (p *Plaintext) Read(b []byte) (int, error) {
	if len(p.pending) > 0 {
		n := copy(b, p.pending)
		p.pending = p.pending[n:]
		return n, nil
	}
	if p.ctLeft == 0 {
		return 0, io.EOF
	}
	if p.ctLeft > BlockSize && len(b) >= BlockSize {
		// Whole blocks straight into b, short of the last block, whose
		// padding must not be returned.
		n := min(int64(len(b))&^(BlockSize-1), p.ctLeft-BlockSize)
		if _, err := io.ReadFull(p.src, b[:n]); err != nil {
			return 0, unexpected(err)
		}
		p.cbc.CryptBlocks(b[:n], b[:n])
		p.ctLeft -= n
		return int(n), nil
	}
	// The last block, or a buffer shorter than a block: one block of our own.
	if _, err := io.ReadFull(p.src, p.block[:]); err != nil {
		return 0, unexpected(err)
	}
	p.cbc.CryptBlocks(p.block[:], p.block[:])
	p.ctLeft -= BlockSize
	p.pending = p.block[:]
	if p.ctLeft == 0 {
		p.pending = p.block[:BlockSize-p.pad]
	}
	n := copy(b, p.pending)
	p.pending = p.pending[n:]
	if n == 0 && p.ctLeft == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
