// Package cbchmac is the content encryption of the Health Data Connect
// transport: AES_128_CBC_HMAC_SHA_256 (RFC 7518 §5.2.3, "A128CBC-HS256"),
// the authenticated encryption that JWE's enc parameter names. It knows
// nothing of envelopes; package jwe reads and writes them and calls it.
//
// Opening is hand-written because the AEAD interface of go-jose (and of
// crypto/cipher) needs the ciphertext and tag in one contiguous buffer and
// copies it twice. Here the tag is computed over a ciphertext held anywhere
// (in memory, or spooled to a file for a large upload)
// and verified in constant time before any byte is decrypted; the padding is
// checked on the last block alone, so the plaintext is then produced as a
// stream of exactly known length, or in place over an in-memory ciphertext.
//
// Sealing is hand-written too, with the same primitives, because the edge
// seals every response and go-jose's CBC-HMAC AEAD allocates four buffers
// and copies the plaintext three times per call; BenchmarkSeal compares the
// two (docs/performance.md has the figures). go-jose remains
// the oracle: the tests hold Seal to its AEAD byte for byte and open what
// it seals, on random sizes.
//
// Sealer seals a plaintext written in pieces, for hdc call's uploads,
// which are too large to hold: no library offers that (go-jose's AEAD, like
// every cipher.AEAD, takes one buffer), and JWE puts the tag after the
// ciphertext, so a stream can end with it. Its output is Seal's byte for
// byte (the tests hold it to Seal and to go-jose, and FuzzSealer on pieces
// and chunk sizes); BenchmarkSealer shows about Seal's speed with 32 KiB of
// memory at any size.
//
// Every failure that involves the key (a tag that does not verify, bad
// padding, a ciphertext of the wrong shape) is ErrDecrypt, one value, so
// that a caller can answer all of them alike.
package cbchmac
