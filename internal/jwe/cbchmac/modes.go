package cbchmac

import (
	"crypto/cipher"
	"sync"
)

// ivSetter is a CBC mode whose IV can be set again, as both modes
// crypto/cipher makes are (for an AES block and the generic ones), though
// cipher.BlockMode does not say so.
type ivSetter interface {
	cipher.BlockMode
	SetIV(iv []byte)
}

// cbcModes pools a key's CBC modes, one pool for each direction.
// crypto/cipher's constructors copy the AES key schedule (about 500
// bytes) into every mode they make: two a request at the edge, a kilobyte
// of its allocations. A pooled mode is only given its IV.
type cbcModes struct {
	encrypters, decrypters sync.Pool // of ivSetter
}

// encrypter returns a CBC encrypter of the key under iv; give it back with
// putEncrypter.
func (k *Key) encrypter(iv []byte) cipher.BlockMode {
	if m, ok := k.modes.encrypters.Get().(ivSetter); ok {
		m.SetIV(iv)
		return m
	}
	return cipher.NewCBCEncrypter(k.block, iv)
}

// decrypter returns a CBC decrypter of the key under iv; give it back with
// putDecrypter.
func (k *Key) decrypter(iv []byte) cipher.BlockMode {
	if m, ok := k.modes.decrypters.Get().(ivSetter); ok {
		m.SetIV(iv)
		return m
	}
	return cipher.NewCBCDecrypter(k.block, iv)
}

func (k *Key) putEncrypter(m cipher.BlockMode) { putMode(&k.modes.encrypters, m) }
func (k *Key) putDecrypter(m cipher.BlockMode) { putMode(&k.modes.decrypters, m) }

// putMode keeps m for the next caller when its IV can be set again.
func putMode(pool *sync.Pool, m cipher.BlockMode) {
	if s, ok := m.(ivSetter); ok {
		pool.Put(s)
	}
}
