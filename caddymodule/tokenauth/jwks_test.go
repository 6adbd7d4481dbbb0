package tokenauth

import (
	"crypto/ed25519"
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/testkit"
)

func TestParseJWKS(t *testing.T) {
	x := base64.RawURLEncoding.EncodeToString(make([]byte, ed25519.PublicKeySize))
	okp := func(members string) string {
		return `{"kty":"OKP","crv":"Ed25519","x":"` + x + `"` + members + `}`
	}
	tests := []struct {
		name string
		doc  string
		kids []string // nil: the document is refused
	}{
		{"one key", `{"keys":[` + okp(`,"kid":"a","alg":"EdDSA","use":"sig"`) + `]}`, []string{"a"}},
		{"no alg, no use", `{"keys":[` + okp(`,"kid":"a"`) + `]}`, []string{"a"}},
		{"key_ops verify", `{"keys":[` + okp(`,"kid":"a","key_ops":["verify"]`) + `]}`, []string{"a"}},
		{"two keys and others", `{"keys":[` + okp(`,"kid":"a"`) + `,{"kty":"RSA","kid":"r","n":"AQAB","e":"AQAB"},` + okp(`,"kid":"b"`) + `]}`, []string{"a", "b"}},
		{"empty set", `{"keys":[]}`, []string{}},
		{"extra members", `{"keys":[` + okp(`,"kid":"a","x5c":["MII"]`) + `],"other":1}`, []string{"a"}},
		{"skip: no kid", `{"keys":[` + okp(``) + `]}`, []string{}},
		{"skip: empty kid", `{"keys":[` + okp(`,"kid":""`) + `]}`, []string{}},
		{"skip: X25519", `{"keys":[{"kty":"OKP","crv":"X25519","x":"` + x + `","kid":"a"}]}`, []string{}},
		{"skip: EC", `{"keys":[{"kty":"EC","crv":"P-256","x":"` + x + `","y":"` + x + `","kid":"a"}]}`, []string{}},
		{"skip: alg RS256", `{"keys":[` + okp(`,"kid":"a","alg":"RS256"`) + `]}`, []string{}},
		{"skip: use enc", `{"keys":[` + okp(`,"kid":"a","use":"enc"`) + `]}`, []string{}},
		{"skip: key_ops sign only", `{"keys":[` + okp(`,"kid":"a","key_ops":["sign"]`) + `]}`, []string{}},
		{"skip: short x", `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAA","kid":"a"}]}`, []string{}},
		{"skip: padded x", `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + x + `=","kid":"a"}]}`, []string{}},
		{"skip: x in standard base64", `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + strings.Repeat("+", 43) + `","kid":"a"}]}`, []string{}},
		{"skip: kid not a string", `{"keys":[` + okp(`,"kid":1`) + `]}`, []string{}},
		{"skip: not an object", `{"keys":[1,"a",null,[]]}`, []string{}},
		{"refuse: duplicate kid", `{"keys":[` + okp(`,"kid":"a"`) + `,` + okp(`,"kid":"a"`) + `]}`, nil},
		{"refuse: not JSON", `keys`, nil},
		{"refuse: truncated", `{"keys":[`, nil},
		{"refuse: trailing data", `{"keys":[]} {}`, nil},
		{"refuse: no keys member", `{}`, nil},
		{"refuse: null keys", `{"keys":null}`, nil},
		{"refuse: keys not an array", `{"keys":{}}`, nil},
		{"refuse: an array", `[]`, nil},
		{"refuse: empty", ``, nil},
		{"refuse: too large", `{"keys":[],"pad":"` + strings.Repeat("a", maxJWKSSize) + `"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := parseJWKS([]byte(tt.doc))
			if tt.kids == nil {
				if err == nil {
					t.Fatalf("accepted: %v", set)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var kids []string
			for kid, k := range set {
				kids = append(kids, kid)
				if len(k) != ed25519.PublicKeySize {
					t.Fatalf("key %q has %d bytes", kid, len(k))
				}
			}
			slices.Sort(kids)
			if !slices.Equal(kids, tt.kids) {
				t.Fatalf("kids = %v, want %v", kids, tt.kids)
			}
		})
	}
}

func TestParseJWKSKeyValue(t *testing.T) {
	k := testkit.NewSigner("k1")
	set, err := parseJWKS(testkit.JWKS(k))
	if err != nil {
		t.Fatal(err)
	}
	if !set["k1"].Equal(k.Pub) {
		t.Fatal("the parsed key differs from the published one")
	}
}
