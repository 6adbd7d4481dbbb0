package jwe

import (
	"crypto/cipher"
	"crypto/subtle"
	"io"
	"sync"
)

var chunkPool = sync.Pool{New: func() any { b := make([]byte, readBufferSize); return &b }}

// Open authenticates the envelope's ciphertext, read from ct (Size bytes from
// offset 0), and returns a reader of its plaintext. The tag is computed over
// the whole ciphertext and compared in constant time before any byte is
// decrypted; the padding is checked (on the last block alone, which CBC
// allows) before the reader is returned, so a caller that gets no error knows
// the exact plaintext length and that every byte of it is authentic. Every
// failure is ErrDecrypt.
func (e *Envelope) Open(k *Key, ct io.ReaderAt) (*Plaintext, error) {
	pad, err := e.verify(k, ct)
	if err != nil {
		return nil, err
	}
	return &Plaintext{
		Size:   e.Size - int64(pad),
		src:    io.NewSectionReader(ct, 0, e.Size),
		cbc:    cipher.NewCBCDecrypter(k.block, e.IV[:]),
		ctLeft: e.Size,
		pad:    pad,
	}, nil
}

// Decrypt opens an envelope whose ciphertext is in memory and returns the
// whole plaintext, decrypted straight from ct once it is verified.
func (e *Envelope) Decrypt(k *Key, ct []byte) ([]byte, error) {
	if int64(len(ct)) != e.Size {
		return nil, ErrDecrypt
	}
	return e.decryptTo(k, make([]byte, len(ct)), ct)
}

// DecryptInPlace is Decrypt without the copy: the plaintext is decrypted
// over ct, and the returned slice shares ct's memory. ct is left unchanged
// when it fails.
func (e *Envelope) DecryptInPlace(k *Key, ct []byte) ([]byte, error) {
	if int64(len(ct)) != e.Size {
		return nil, ErrDecrypt
	}
	return e.decryptTo(k, ct, ct)
}

// decryptTo verifies ct, then decrypts it into dst (which may be ct itself).
func (e *Envelope) decryptTo(k *Key, dst, ct []byte) ([]byte, error) {
	pad, err := e.verify(k, bytesReaderAt(ct))
	if err != nil {
		return nil, err
	}
	cipher.NewCBCDecrypter(k.block, e.IV[:]).CryptBlocks(dst, ct)
	return dst[:len(ct)-pad], nil
}

// verify checks the tag over the ciphertext, then the padding of the last
// block, and returns the padding's length.
func (e *Envelope) verify(k *Key, ct io.ReaderAt) (pad int, err error) {
	if e.Size == 0 || e.Size%blockSize != 0 {
		return 0, ErrDecrypt
	}
	mac := k.startTag(e.Protected, e.IV[:])
	if err := eachChunk(ct, e.Size, func(b []byte) { mac.Write(b) }); err != nil {
		k.macs.Put(mac)
		return 0, err
	}
	var tag [tagSize]byte
	k.endTag(mac, len(e.Protected), &tag)
	if subtle.ConstantTimeCompare(tag[:], e.Tag[:]) != 1 {
		return 0, ErrDecrypt
	}

	// The tag is good: decrypt the last block on its own to learn the padding.
	var tail [2 * blockSize]byte // previous ciphertext block (or iv), last block
	if e.Size == blockSize {
		copy(tail[:blockSize], e.IV[:])
		if _, err := ct.ReadAt(tail[blockSize:], 0); err != nil {
			return 0, err
		}
	} else if _, err := ct.ReadAt(tail[:], e.Size-2*blockSize); err != nil {
		return 0, err
	}
	var last [blockSize]byte
	k.block.Decrypt(last[:], tail[blockSize:])
	for i := range last {
		last[i] ^= tail[i]
	}
	pad = int(last[blockSize-1])
	if pad == 0 || pad > blockSize {
		return 0, ErrDecrypt
	}
	for _, b := range last[blockSize-pad:] {
		if int(b) != pad {
			return 0, ErrDecrypt
		}
	}
	return pad, nil
}

// eachChunk calls fn on consecutive pieces of the first size bytes of r.
func eachChunk(r io.ReaderAt, size int64, fn func([]byte)) error {
	if m, ok := r.(bytesReaderAt); ok {
		fn(m[:size])
		return nil
	}
	bp := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(bp)
	buf := *bp
	for off := int64(0); off < size; {
		n := int64(len(buf))
		if size-off < n {
			n = size - off
		}
		if _, err := r.ReadAt(buf[:n], off); err != nil {
			return err
		}
		fn(buf[:n])
		off += n
	}
	return nil
}

// bytesReaderAt reads from memory; eachChunk hands it to fn whole.
type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Plaintext streams the plaintext of an opened envelope. It decrypts in the
// caller's buffer where it can, so reading costs no copy beyond the read of
// the ciphertext itself.
type Plaintext struct {
	// Size is the length of the plaintext in bytes.
	Size int64

	src     *io.SectionReader
	cbc     cipher.BlockMode
	ctLeft  int64  // ciphertext bytes not yet decrypted
	pad     int    // padding bytes at the end of the last block
	pending []byte // decrypted bytes not yet returned
	block   [blockSize]byte
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
	if p.ctLeft > blockSize && len(b) >= blockSize {
		// Whole blocks straight into b, short of the last block, whose
		// padding must not be returned.
		n := min(int64(len(b))&^(blockSize-1), p.ctLeft-blockSize)
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
	p.ctLeft -= blockSize
	p.pending = p.block[:]
	if p.ctLeft == 0 {
		p.pending = p.block[:blockSize-p.pad]
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
