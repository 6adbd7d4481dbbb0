package cbchmac

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// vectors are the content-layer vectors of testdata/jwe.json: the RFC's
// key, iv, additional data, plaintext, ciphertext and tag.
type vectors struct {
	RFC7518B1 struct {
		Key, Plaintext, IV, AAD, Ciphertext, Tag string
	} `json:"rfc7518_b1_aes_128_cbc_hmac_sha_256"`
	RFC7516A3 struct {
		Key           string `json:"key"`
		Protected     string `json:"protected_b64url"`
		IV            string `json:"iv_b64url"`
		Ciphertext    string `json:"ciphertext_b64url"`
		Tag           string `json:"tag_b64url"`
		PlaintextUTF8 string `json:"plaintext_utf8"`
	} `json:"rfc7516_a3_content_layer"`
}

// vector is one case: a key and what it seals.
type vector struct {
	name                      string
	cek, aad, iv, pt, ct, tag []byte
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	data, err := os.ReadFile("../../../testdata/jwe.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	unhex := func(s string) []byte {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	unb64 := func(s string) []byte {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b1, a3 := v.RFC7518B1, v.RFC7516A3
	return []vector{
		{"RFC 7518 B.1", unhex(b1.Key), unhex(b1.AAD), unhex(b1.IV), unhex(b1.Plaintext), unhex(b1.Ciphertext), unhex(b1.Tag)},
		{"RFC 7516 A.3", unhex(a3.Key), []byte(a3.Protected), unb64(a3.IV), []byte(a3.PlaintextUTF8), unb64(a3.Ciphertext), unb64(a3.Tag)},
	}
}

func (v vector) sealed() *Sealed {
	s := Sealed{AAD: string(v.aad), Size: int64(len(v.ct))}
	copy(s.IV[:], v.iv)
	copy(s.Tag[:], v.tag)
	return &s
}

// TestVectors seals and opens the RFC vectors, which fix the iv and the
// additional authenticated data.
func TestVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.name, func(t *testing.T) {
			k, err := NewKey(v.cek)
			if err != nil {
				t.Fatal(err)
			}
			ct, tag := k.sealIV(v.iv, string(v.aad), v.pt)
			if !bytes.Equal(ct, v.ct) || !bytes.Equal(tag, v.tag) {
				t.Fatalf("seal: ciphertext or tag differs from the vector")
			}
			pt, err := k.Decrypt(v.sealed(), v.ct)
			if err != nil || !bytes.Equal(pt, v.pt) {
				t.Fatalf("Decrypt = %q, %v; want %q", pt, err, v.pt)
			}
			p, err := k.Open(v.sealed(), bytes.NewReader(v.ct))
			if err != nil || p.Size != int64(len(v.pt)) {
				t.Fatalf("Open: %v", err)
			}
		})
	}
}

func TestNewKeySize(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33, 64} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			if _, err := NewKey(make([]byte, n)); err != ErrKeySize {
				t.Fatalf("NewKey(%d bytes) = %v", n, err)
			}
		})
	}
}
