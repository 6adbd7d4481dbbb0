// Package jwe is the wire format of the Health Data Connect encrypted
// transport: JWE (RFC 7516) envelopes with alg "dir" and enc
// "A128CBC-HS256" (RFC 7518 §5.2.3), whose content-encryption key is a
// 16-byte shared key string written twice (NewKey), or enc "A256GCM"
// (RFC 7518 §5.3), whose key is 32 random bytes (NewKeyFor, NewGCMSecret),
// an envelope naming iat and jti when its key requires it (Fresh). The
// cryptography of A128CBC-HS256 is package cbchmac, A256GCM's
// crypto/cipher's; this
// package reads and writes envelopes and hands them the ciphertext, iv,
// tag and additional authenticated data.
//
// Request envelopes come as the flattened JSON serialization with a top-level
// "kid" member (and optionally "kid" in the protected header), as the general
// serialization with one recipient, or as the compact serialization. Response
// envelopes are flattened JSON with a protected header naming alg, enc and kid
// (its text is the additional authenticated data, as every JOSE library reads
// it), or compact, in the form of the request.
//
// The package is shared: the edge reads requests and writes answers, hdc call
// and the bench write requests and read answers, and the tests use it as the
// reference they hold independent libraries to.
//
// The reader is hand-written rather than go-jose's ParseEncryptedJSON for four
// reasons: go-jose needs the whole body in memory (an upload is tens of
// megabytes of envelope, 64 MiB by default, so the ciphertext is decoded as a
// stream into a caller-provided spool instead), it accepts duplicate members
// and padded base64, it has no notion of the top-level kid, and it does not
// keep the protected header text exactly as received, which is the
// additional authenticated data.
//
// Errors are of two kinds. A *FormatError describes a malformed or unsupported
// envelope; its text carries nothing secret and may be shown to the client.
// Every failure that involves a key (wrong tag, bad padding) is ErrDecrypt,
// one value, so that a caller can answer all of them alike.
package jwe
