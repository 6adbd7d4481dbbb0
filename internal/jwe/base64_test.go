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
