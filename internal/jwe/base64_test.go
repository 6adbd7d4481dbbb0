package jwe

import (
	"bytes"
	stdbase64 "encoding/base64"
	mrand "math/rand/v2"
	"testing"
)

// TestBase64MatchesStdlib compares the SIMD decoder with encoding/base64 on
// long inputs, where the vector paths run: valid text of every length up to
// 600 characters, each also with one byte replaced at a random place by a
// byte from outside and inside the alphabet.
func TestBase64MatchesStdlib(t *testing.T) {
	std := stdbase64.RawURLEncoding.Strict()
	r := mrand.New(mrand.NewPCG(1, 2))
	for n := 0; n <= 450; n++ {
		raw := make([]byte, n)
		for i := range raw {
			raw[i] = byte(r.IntN(256))
		}
		text := []byte(std.EncodeToString(raw))
		variants := [][]byte{text}
		for _, c := range []byte{'+', '/', '=', '\n', '\r', ' ', 0, 0x80, 'A', '_', '-'} {
			if len(text) == 0 {
				break
			}
			v := bytes.Clone(text)
			v[r.IntN(len(v))] = c
			variants = append(variants, v)
		}
		for _, v := range variants {
			want, wantErr := std.DecodeString(string(v))
			got, gotErr := b64.DecodeString(string(v))
			if (wantErr == nil) != (gotErr == nil) || !bytes.Equal(got, want) {
				t.Fatalf("length %d, %q: encoding/base64 (%v) and the codec (%v) disagree", len(v), v, wantErr, gotErr)
			}
		}
	}
}

// FuzzDecodeExact holds decodeExact, which finds CR and LF by the length
// decoded, to the plain rule: it accepts exactly the text that
// encoding/base64's strict decoder accepts and that holds neither.
func FuzzDecodeExact(f *testing.F) {
	for _, s := range []string{"AAECAwQFBgcICQoLDA0ODw", "AAAA\n", "AA\nA", "\n", "AB\r\nCD", "ABC\n", "A", "AQ", ""} {
		f.Add([]byte(s))
	}
	std := stdbase64.RawURLEncoding.Strict()
	f.Fuzz(func(t *testing.T, text []byte) {
		want, err := std.DecodeString(string(text))
		wantOK := err == nil && !bytes.ContainsAny(text, "\r\n")
		out := make([]byte, b64.DecodedLen(len(text)))
		if ok := decodeExact(out, text); ok != wantOK {
			t.Fatalf("%q: decodeExact %v, want %v", text, ok, wantOK)
		}
		if wantOK && !bytes.Equal(out, want) {
			t.Fatalf("%q decodes differently", text)
		}
	})
}
