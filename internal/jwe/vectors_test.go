package jwe

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"testing"
	"testing/iotest"
)

// vectors mirrors testdata/jwe.json, the public vectors of the transport.
type vectors struct {
	Request       envelopeVector `json:"request_envelope"`
	RequestSpaced envelopeVector `json:"request_envelope_spaced_protected_header"`
	Response      envelopeVector `json:"response_envelope_protected"`
	ResponseV1    envelopeVector `json:"response_envelope"`
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

func (v envelopeVector) key(t testing.TB) *CEK {
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

func unb64(t testing.TB, s string) []byte {
	t.Helper()
	b, err := b64.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
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
		{"response", v.Response, Flattened, v.Response.json(t), "client-1"},
		{"response compact", v.Response, Compact, v.Response.compact(), "client-1"},
		{"response of the first version", v.ResponseV1, Flattened, v.ResponseV1.json(t), ""},
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
