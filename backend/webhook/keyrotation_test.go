package webhook

import (
	"strings"
	"testing"
)

// FuzzParseKeyRequest: a rotation's body never panics the parser; a key it
// returns passes CheckSigningKey, and its error never quotes a key given.
func FuzzParseKeyRequest(f *testing.F) {
	for _, seed := range []string{`{}`, `{"signing_key":"0123456789abcdef"}`, `{"signing_key":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`,
		`{"signing_key":"whsec_not-base64-key!"}`, `{"signing_key":null}`, `{"signing_key":1}`, `[]`, ``, `{"signing_key":"a","signing_key":"b"}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		key, err := parseKeyRequest([]byte(body))
		if err != nil {
			if key != "" && len(key) >= 8 && strings.Contains(err.Error(), key) {
				t.Fatalf("the error quotes the key: %v", err)
			}
			return
		}
		if key != "" && CheckSigningKey(key) != nil {
			t.Fatalf("parsed %q, which CheckSigningKey refuses", key)
		}
	})
}

// TestGenerateSigningKey: generated keys are valid whsec_ secrets of 32
// bytes, each its own.
func TestGenerateSigningKey(t *testing.T) {
	t.Parallel()
	a, b := GenerateSigningKey(), GenerateSigningKey()
	if a == b || !strings.HasPrefix(a, "whsec_") || CheckSigningKey(a) != nil || len(a) != len("whsec_")+44 {
		t.Fatalf("generated %q and %q", a, b)
	}
}
