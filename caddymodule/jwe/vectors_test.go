package jwe

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"testing"
	"testing/iotest"
)

// vectors mirrors testdata/jwe.json, the public vectors of the transport.
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
	Request       envelopeVector `json:"request_envelope"`
	RequestSpaced envelopeVector `json:"request_envelope_spaced_protected_header"`
	Response      envelopeVector `json:"response_envelope"`
}

type envelopeVector struct {
	SharedKey     string            `json:"shared_key"`
	Envelope      map[string]string `json:"envelope"`
	PlaintextUTF8 string            `json:"plaintext_utf8"`
}

func (v envelopeVector) json(t testing.TB) []byte {
	b, err := json.Marshal(v.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (v envelopeVector) compact() []byte {
	e := v.Envelope
	return []byte(e["protected"] + ".." + e["iv"] + "." + e["ciphertext"] + "." + e["tag"])
}

func (v envelopeVector) key(t testing.TB) *Key {
	k, err := NewKey(v.SharedKey)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func loadVectors(t testing.TB) vectors {
	t.Helper()
	data, err := os.ReadFile("../../testdata/jwe.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func unb64(t testing.TB, s string) []byte {
	t.Helper()
	b, err := b64.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestContentLayerVectors checks sealing and opening against the RFC vectors,
// which fix the iv and the additional authenticated data.
func TestContentLayerVectors(t *testing.T) {
	v := loadVectors(t)
	tests := []struct {
		name                      string
		cek, aad, iv, pt, ct, tag []byte
	}{
		{
			name: "RFC 7518 B.1",
			cek:  unhex(t, v.RFC7518B1.Key), aad: unhex(t, v.RFC7518B1.AAD), iv: unhex(t, v.RFC7518B1.IV),
			pt: unhex(t, v.RFC7518B1.Plaintext), ct: unhex(t, v.RFC7518B1.Ciphertext), tag: unhex(t, v.RFC7518B1.Tag),
		},
		{
			name: "RFC 7516 A.3",
			cek:  unhex(t, v.RFC7516A3.Key), aad: []byte(v.RFC7516A3.Protected), iv: unb64(t, v.RFC7516A3.IV),
			pt: []byte(v.RFC7516A3.PlaintextUTF8), ct: unb64(t, v.RFC7516A3.Ciphertext), tag: unb64(t, v.RFC7516A3.Tag),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := NewKeyFromCEK(tt.cek)
			if err != nil {
				t.Fatal(err)
			}
			ct, tag := sealIV(k, tt.iv, string(tt.aad), tt.pt)
			if !bytes.Equal(ct, tt.ct) || !bytes.Equal(tag, tt.tag) {
				t.Fatalf("seal: ciphertext or tag differs from the vector")
			}
			e := &Envelope{Protected: string(tt.aad), Size: int64(len(tt.ct))}
			copy(e.IV[:], tt.iv)
			copy(e.Tag[:], tt.tag)
			pt, err := e.Decrypt(k, tt.ct)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(pt, tt.pt) {
				t.Fatalf("plaintext = %q, want %q", pt, tt.pt)
			}
		})
	}
}

// TestEnvelopeVectors decrypts every envelope vector in each form it can take,
// read from readers that hand out the bytes in different pieces.
func TestEnvelopeVectors(t *testing.T) {
	v := loadVectors(t)
	tests := []struct {
		name    string
		vec     envelopeVector
		form    Form
		data    []byte
		wantKid string
	}{
		{"request", v.Request, Request, v.Request.json(t), "client-1"},
		{"request as flattened", v.Request, Flattened, v.Request.json(t), "client-1"},
		{"request compact", v.Request, Compact, v.Request.compact(), ""},
		{"spaced protected header", v.RequestSpaced, Request, v.RequestSpaced.json(t), "client-1"},
		{"spaced protected header compact", v.RequestSpaced, Compact, v.RequestSpaced.compact(), ""},
		{"response", v.Response, Flattened, v.Response.json(t), ""},
	}
	readers := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte", iotest.OneByteReader},
		{"half", iotest.HalfReader},
		{"data with EOF", iotest.DataErrReader},
	}
	for _, tt := range tests {
		for _, rd := range readers {
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				var ct bytes.Buffer
				e, err := Read(rd.wrap(bytes.NewReader(tt.data)), tt.form, &ct, int64(len(tt.data)))
				if err != nil {
					t.Fatal(err)
				}
				if e.Kid != tt.wantKid {
					t.Fatalf("kid = %q, want %q", e.Kid, tt.wantKid)
				}
				pt, err := e.Decrypt(tt.vec.key(t), ct.Bytes())
				if err != nil {
					t.Fatal(err)
				}
				if string(pt) != tt.vec.PlaintextUTF8 {
					t.Fatalf("plaintext = %q, want %q", pt, tt.vec.PlaintextUTF8)
				}
			})
		}
	}
}
