package jwe

import (
	"bytes"
	stdbase64 "encoding/base64"
	"errors"
	"testing"

	"github.com/health-data-connect/hdc/internal/jwe/cbchmac"
)

// FuzzRead feeds arbitrary bytes to the envelope reader in every form. It
// must never panic, must fail only with a format error, ErrTooLarge or
// ErrDecrypt, and whatever it accepts must satisfy the structural checks.
func FuzzRead(f *testing.F) {
	v := loadVectors(f)
	for _, vec := range []envelopeVector{v.Request, v.RequestSpaced, v.Response, v.ResponseV1} {
		f.Add(vec.json(f), uint8(Flattened))
		f.Add(vec.compact(), uint8(Compact))
	}
	key := v.Request.key(f)
	f.Add(EncryptRequest(key, Protected{Kid: "k"}, []byte(`{"a":1}`)), uint8(Request))
	f.Add(EncryptResponse(key, "k", nil), uint8(Flattened))
	gcm := testKeys(f)[1].key
	f.Add(EncryptRequest(gcm, Protected{Kid: "k", Iat: 1795000000, Jti: "a-request-id-0001"}, []byte(`{"a":1}`)), uint8(Request))
	f.Add(EncryptCompact(gcm, Protected{Kid: "k", Iat: 1795000000, Jti: "a-request-id-0001"}, nil), uint8(Compact))
	f.Add([]byte(`{"protected":"e30","unprotected":{"kid":"\u0000"},"iv":"","ciphertext":"","tag":""}`), uint8(Request))
	f.Add([]byte(`{"protected":"e30","recipients":[{"header":{"kid":"k"},"encrypted_key":""}],"iv":"","ciphertext":"","tag":""}`), uint8(Request))
	f.Fuzz(func(t *testing.T, data []byte, form uint8) {
		fm := Form(form % 3)
		var ct bytes.Buffer
		e, err := Read(bytes.NewReader(data), fm, &ct, 1<<20)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		cbc := e.Header.Enc == EncA128CBCHS256
		if e.Size != int64(ct.Len()) || cbc && (e.Size == 0 || e.Size%cbchmac.BlockSize != 0) {
			t.Fatalf("accepted a ciphertext of %d bytes (buffer %d)", e.Size, ct.Len())
		}
		if e.Header.Alg != AlgDir || !ValidEnc(e.Header.Enc) || e.Header.Iat < 0 {
			t.Fatalf("accepted header %+v", e.Header)
		}
		if fm == Request && e.AAD == "" {
			t.Fatal("accepted a request without a protected header")
		}
		k := key
		if !cbc {
			k = gcm
		}
		pt, err := e.Decrypt(k, ct.Bytes())
		if err != nil && err != ErrDecrypt {
			t.Fatalf("Decrypt: %v", err)
		}
		if err == nil && int64(len(pt)) > e.Size {
			t.Fatal("plaintext longer than ciphertext")
		}
	})
}

// FuzzBase64 holds the SIMD base64 decoder the codec uses to the standard
// library's: for any input, both accept or both refuse, and decode alike;
// and both encode alike.
func FuzzBase64(f *testing.F) {
	f.Add([]byte("AAECAwQFBgcICQoLDA0ODw"))
	f.Add([]byte("YilEJ5ZrVQ1tGxol_Q6nYQ"))
	f.Add([]byte("abc+/="))
	f.Add([]byte("ab\ncd"))
	f.Add([]byte("AB"))
	f.Add([]byte("AQ"))
	std := stdbase64.RawURLEncoding.Strict()
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := std.DecodeString(string(data))
		got, gotErr := b64.DecodeString(string(data))
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%q: encoding/base64 err %v, codec err %v", data, wantErr, gotErr)
		}
		if wantErr == nil && !bytes.Equal(got, want) {
			t.Fatalf("%q decodes differently", data)
		}
		if std.EncodeToString(data) != b64.EncodeToString(data) {
			t.Fatalf("%q encodes differently", data)
		}
	})
}
