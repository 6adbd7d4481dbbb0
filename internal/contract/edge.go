package contract

import (
	"crypto/sha256"
	"crypto/subtle"
)

// HeaderEdgeSecret carries the secret the edge and the backend share; the
// backend believes the identity headers only of requests that carry it.
const HeaderEdgeSecret = HeaderPrefix + "Edge-Secret"

// SameSecret compares the SHA-256 digests of a and b in constant time, so
// that neither the content nor the length of the secret shows in timing.
func SameSecret(a, b string) bool {
	da, db := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(da[:], db[:]) == 1
}
