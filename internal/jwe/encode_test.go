package jwe

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// TestAppendHeader holds the hand-built header to what json.Marshal makes of
// the same Header, for kids that need escaping and kids that do not.
func TestAppendHeader(t *testing.T) {
	for _, kid := range []string{
		"", "k1", "client-1:2026-11.key_2", `quote"d`, `back\slash`, "a<b", "a>b", "a&b",
		"tab\there", "nul\x00", "del\x7f", "é", "日本", "\u2028", "bad utf-8 \xff",
	} {
		want, err := json.Marshal(Header{Alg: AlgDir, Enc: EncA128CBCHS256, Kid: kid})
		if err != nil {
			t.Fatal(err)
		}
		if got := appendHeader([]byte("x"), EncA128CBCHS256, Protected{Kid: kid}); string(got) != "x"+string(want) {
			t.Errorf("kid %q: appendHeader = %s, want %s", kid, got[1:], want)
		}
	}
}

// TestResponseShape holds an answer to the members every JOSE library
// reads: a protected header naming alg, enc and kid, and no unprotected
// header or top-level kid beside it.
func TestResponseShape(t *testing.T) {
	key, _ := NewKey(testShared)
	for _, kid := range []string{"client-1", ""} {
		t.Run("kid "+kid, func(t *testing.T) {
			var got map[string]string
			if err := json.Unmarshal(EncryptResponse(key, kid, []byte(`{}`)), &got); err != nil {
				t.Fatal(err)
			}
			var names []string
			for name := range got {
				names = append(names, name)
			}
			slices.Sort(names)
			if want := []string{"ciphertext", "iv", "protected", "tag"}; !slices.Equal(names, want) {
				t.Fatalf("members %v, want %v", names, want)
			}
			var h Header
			if err := json.Unmarshal(unb64(t, got["protected"]), &h); err != nil {
				t.Fatal(err)
			}
			if want := (Header{Alg: AlgDir, Enc: EncA128CBCHS256, Kid: kid}); h != want {
				t.Fatalf("protected header %+v, want %+v", h, want)
			}
		})
	}
}

// TestFresh: each call names the time and a new jti of 128 bits.
func TestFresh(t *testing.T) {
	a, b := Fresh("k1"), Fresh("k1")
	if a.Kid != "k1" || a.Jti == b.Jti || len(a.Jti) != 22 || a.Iat < time.Now().Unix()-1 || a.Iat > time.Now().Unix() {
		t.Fatalf("Fresh = %+v, then %+v", a, b)
	}
}
