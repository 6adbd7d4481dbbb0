package tokenauth

import (
	"context"
	"testing"
)

// benchVerifier returns a verifier whose keys come from a JWK Set server,
// fetched once, and a token it accepts.
func benchVerifier(b *testing.B, opts VerifierOptions) (*Verifier, string) {
	f := newFixture(b, opts)
	token := f.key.Token(claimsAt(f.clock.Now()))
	if _, err := f.verifier.Verify(context.Background(), token, ModeAccess); err != nil {
		b.Fatal(err)
	}
	return f.verifier, token
}

// BenchmarkVerifyCold measures a full verification: parsing, an Ed25519
// signature check and the claims checks (the cache is off).
func BenchmarkVerifyCold(b *testing.B) {
	v, token := benchVerifier(b, VerifierOptions{CacheSize: -1})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, token, ModeAccess); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyCached measures a cache hit: a SHA-256 of the token, a map
// lookup and the check that its key is still in the set.
func BenchmarkVerifyCached(b *testing.B) {
	v, token := benchVerifier(b, VerifierOptions{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, token, ModeAccess); err != nil {
			b.Fatal(err)
		}
	}
}
