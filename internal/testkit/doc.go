// Package testkit is what the tests of several packages share: minting
// EdDSA access tokens and serving the JWKS that verifies them, a local
// keeper, a settable clock, polling for a condition, loopback listeners,
// and assertions on RFC 9457 problem answers. It follows the storetest and blobtest
// precedent: a package of test support, imported only by tests (and by the
// bench command, which mints tokens too).
package testkit
