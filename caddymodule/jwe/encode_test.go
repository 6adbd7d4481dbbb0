package jwe

import (
	"encoding/json"
	"testing"
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
		if got := appendHeader([]byte("x"), kid); string(got) != "x"+string(want) {
			t.Errorf("kid %q: appendHeader = %s, want %s", kid, got[1:], want)
		}
	}
}
