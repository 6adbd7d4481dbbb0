package cbchmac

import (
	"bytes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"testing"
)

// rawSealed encrypts whole blocks without adding padding and tags them.
func rawSealed(key *Key, aad string, blocks []byte) (Sealed, []byte) {
	s := Sealed{AAD: aad, Size: int64(len(blocks))}
	ct := bytes.Clone(blocks)
	cipher.NewCBCEncrypter(key.block, s.IV[:]).CryptBlocks(ct, ct)
	mac := hmac.New(sha256.New, key.cek[:macSize])
	mac.Write([]byte(aad))
	mac.Write(s.IV[:])
	mac.Write(ct)
	mac.Write(binary.BigEndian.AppendUint64(nil, uint64(len(aad))*8))
	copy(s.Tag[:], mac.Sum(nil))
	return s, ct
}

// TestDecryptFailuresUniform checks that a bad tag, bad padding, a wrong key
// and other additional data all give the same error value, and that a
// refused ciphertext is left as it was.
func TestDecryptFailuresUniform(t *testing.T) {
	key, _ := NewKey(bytes.Repeat([]byte("k"), KeySize))
	const aad = "eyJhbGciOiJkaXIiLCJlbmMiOiJBMTI4Q0JDLUhTMjU2In0"
	iv := make([]byte, IVSize)
	ct, tag := key.sealIV(iv, aad, []byte(`{"a":1}`))
	good := Sealed{AAD: aad, Size: int64(len(ct))}
	copy(good.Tag[:], tag)

	// An authentic ciphertext whose padding is not: a last byte of 0 is
	// never valid padding. Its twin ending in a full block of padding must
	// open, which shows the tag is right and the padding is what fails.
	badPad, ctBadPad := rawSealed(key, aad, make([]byte, 32))
	goodPad, ctGoodPad := rawSealed(key, aad, append(make([]byte, 16), bytes.Repeat([]byte{16}, 16)...))
	if pt, err := key.Decrypt(&goodPad, ctGoodPad); err != nil || len(pt) != 16 {
		t.Fatal("the construction of the bad-padding case is wrong")
	}
	wrongTag, otherAAD := good, good
	wrongTag.Tag[0] ^= 1
	otherAAD.AAD = "eyJhbGciOiJkaXIiLCJlbmMiOiJBMTI4Q0JDLUhTMjU2IiwidHlwIjoiSldFIn0"
	short := good
	short.Size--
	tests := []struct {
		name string
		s    Sealed
		key  *Key
		ct   []byte
	}{
		{"wrong tag", wrongTag, key, ct},
		{"wrong key", good, DummyKey(), ct},
		{"other additional data", otherAAD, key, ct},
		{"bad padding", badPad, key, ctBadPad},
		{"short ciphertext", short, key, ct[:len(ct)-1]},
		{"size not the ciphertext's", short, key, ct},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.key.Decrypt(&tt.s, tt.ct); err != ErrDecrypt {
				t.Fatalf("Decrypt: err = %v, want ErrDecrypt", err)
			}
			ct := bytes.Clone(tt.ct)
			if _, err := tt.key.DecryptInPlace(&tt.s, ct); err != ErrDecrypt {
				t.Fatalf("DecryptInPlace: err = %v, want ErrDecrypt", err)
			}
			if !bytes.Equal(ct, tt.ct) {
				t.Fatal("DecryptInPlace changed a ciphertext it refused")
			}
		})
	}
}
