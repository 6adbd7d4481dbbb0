package cbchmac

import (
	"crypto/cipher"
	"crypto/subtle"
	"io"
	"sync"
)

// readBufferSize is the chunk in which a ciphertext outside memory is read.
const readBufferSize = 64 << 10

var chunkPool = sync.Pool{New: func() any { b := make([]byte, readBufferSize); return &b }}

// Sealed describes a ciphertext: what authenticates it, and its length.
type Sealed struct {
	// AAD is the additional authenticated data.
	AAD string
	IV  [IVSize]byte
	Tag [TagSize]byte
	// Size is the length of the ciphertext in bytes.
	Size int64
}

// Open authenticates the ciphertext s describes, read from ct (s.Size bytes
// from offset 0), and returns a reader of its plaintext. The tag is computed
// over the whole ciphertext and compared in constant time before any byte is
// decrypted; the padding is checked (on the last block alone, which CBC
// allows) before the reader is returned, so a caller that gets no error
// knows the exact plaintext length and that every byte of it is authentic.
// Every failure is ErrDecrypt.
func (k *Key) Open(s *Sealed, ct io.ReaderAt) (*Plaintext, error) {
	pad, err := k.verify(s, ct)
	if err != nil {
		return nil, err
	}
	return &Plaintext{
		Size:   s.Size - int64(pad),
		src:    io.NewSectionReader(ct, 0, s.Size),
		cbc:    cipher.NewCBCDecrypter(k.block, s.IV[:]),
		ctLeft: s.Size,
		pad:    pad,
	}, nil
}

// Decrypt opens a ciphertext held in memory and returns the whole
// plaintext, decrypted straight from ct once it is verified.
func (k *Key) Decrypt(s *Sealed, ct []byte) ([]byte, error) {
	if int64(len(ct)) != s.Size {
		return nil, ErrDecrypt
	}
	return k.decryptTo(s, make([]byte, len(ct)), ct)
}

// DecryptInPlace is Decrypt without the copy: the plaintext is decrypted
// over ct, and the returned slice shares ct's memory. ct is left unchanged
// when it fails.
func (k *Key) DecryptInPlace(s *Sealed, ct []byte) ([]byte, error) {
	if int64(len(ct)) != s.Size {
		return nil, ErrDecrypt
	}
	return k.decryptTo(s, ct, ct)
}

// decryptTo verifies ct, then decrypts it into dst (which may be ct itself).
func (k *Key) decryptTo(s *Sealed, dst, ct []byte) ([]byte, error) {
	pad, err := k.verify(s, bytesReaderAt(ct))
	if err != nil {
		return nil, err
	}
	cbc := k.decrypter(s.IV[:])
	cbc.CryptBlocks(dst, ct)
	k.putDecrypter(cbc)
	return dst[:len(ct)-pad], nil
}

// verify checks the tag over the ciphertext, then the padding of the last
// block, and returns the padding's length.
func (k *Key) verify(s *Sealed, ct io.ReaderAt) (pad int, err error) {
	if s.Size == 0 || s.Size%BlockSize != 0 {
		return 0, ErrDecrypt
	}
	mac := k.startTag(s.AAD, s.IV[:])
	if err := eachChunk(ct, s.Size, func(b []byte) { mac.Write(b) }); err != nil {
		k.macs.Put(mac)
		return 0, err
	}
	var tag [TagSize]byte
	k.endTag(mac, len(s.AAD), &tag)
	if subtle.ConstantTimeCompare(tag[:], s.Tag[:]) != 1 {
		return 0, ErrDecrypt
	}
	return k.padding(s, ct)
}

// padding decrypts the last block on its own, once the tag is good, and
// returns the length of its PKCS #7 padding.
func (k *Key) padding(s *Sealed, ct io.ReaderAt) (int, error) {
	var tail [2 * BlockSize]byte // previous ciphertext block (or iv), last block
	if s.Size == BlockSize {
		copy(tail[:BlockSize], s.IV[:])
		if _, err := ct.ReadAt(tail[BlockSize:], 0); err != nil {
			return 0, err
		}
	} else if _, err := ct.ReadAt(tail[:], s.Size-2*BlockSize); err != nil {
		return 0, err
	}
	var last [BlockSize]byte
	k.block.Decrypt(last[:], tail[BlockSize:])
	for i := range last {
		last[i] ^= tail[i]
	}
	pad := int(last[BlockSize-1])
	if pad == 0 || pad > BlockSize {
		return 0, ErrDecrypt
	}
	for _, b := range last[BlockSize-pad:] {
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
		n := min(int64(len(buf)), size-off)
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
