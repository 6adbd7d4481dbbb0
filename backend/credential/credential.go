// Package credential makes and checks the backend's secrets: client secrets
// (random 256-bit values, kept as an HMAC-SHA-256 under a key of the
// installation: MAC) and the other high-entropy bearer strings (refresh
// tokens, sharing keys), which only need a fast one-way hash (TokenHash).
// A memory-hard hash protects passwords people choose; a secret of 256
// random bits cannot be guessed, so argon2id there only made every login
// cost 19 MiB and 30 ms, which a stranger's bad logins could spend for
// everyone. Client secrets stored by earlier versions as argon2id (Hash)
// are still verified (Verify), and moved to the MAC at their next login.
package credential

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Params are argon2id cost parameters.
type Params struct {
	// Memory in KiB.
	Memory uint32
	// Time is the number of passes.
	Time uint32
	// Threads is the degree of parallelism.
	Threads uint8
}

// DefaultParams follow OWASP's argon2id recommendation (19 MiB, 2 passes, 1
// lane): about 30 ms and 19 MiB per verification.
var DefaultParams = Params{Memory: 19 * 1024, Time: 2, Threads: 1}

// maxParams bound what Verify accepts from a stored encoding, so a tampered
// or corrupt row cannot make one login allocate gigabytes.
var maxParams = Params{Memory: 1 << 20, Time: 16, Threads: 16}

const (
	saltLen = 16
	keyLen  = 32
)

// ErrMalformedHash is returned by Verify and VerifyMAC for an encoding
// they cannot read.
var ErrMalformedHash = errors.New("credential: malformed secret hash")

var b64 = base64.RawStdEncoding

// Hash returns the PHC-style encoding of secret under p with a fresh random
// salt: $argon2id$v=19$m=19456,t=2,p=1$<salt>$<key>.
func Hash(secret string, p Params) string {
	salt := make([]byte, saltLen)
	rand.Read(salt)
	key := argon2.IDKey([]byte(secret), salt, p.Time, p.Memory, p.Threads, keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.Memory, p.Time, p.Threads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// Verify reports whether secret matches encoded, a Hash result, comparing in
// constant time. The cost is that of the parameters in encoded.
func Verify(secret, encoded string) (bool, error) {
	p, salt, key, err := decode(encoded)
	if err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(secret), salt, p.Time, p.Memory, p.Threads, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

func decode(encoded string) (p Params, salt, key []byte, err error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return p, nil, nil, ErrMalformedHash
	}
	var threads uint32
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &threads); err != nil {
		return p, nil, nil, ErrMalformedHash
	}
	p.Threads = uint8(threads)
	if p.Memory == 0 || p.Time == 0 || threads == 0 ||
		p.Memory > maxParams.Memory || p.Time > maxParams.Time || threads > uint32(maxParams.Threads) {
		return p, nil, nil, ErrMalformedHash
	}
	if salt, err = b64.DecodeString(parts[4]); err != nil || len(salt) < 8 {
		return p, nil, nil, ErrMalformedHash
	}
	if key, err = b64.DecodeString(parts[5]); err != nil || len(key) < 16 || len(key) > 64 {
		return p, nil, nil, ErrMalformedHash
	}
	return p, salt, key, nil
}

// macPrefix starts the encoding of a MAC.
const macPrefix = "$hmac-sha256$v=1$"

// MAC returns the encoding of secret under key:
// $hmac-sha256$v=1$<HMAC-SHA-256(key, secret) in unpadded base64>. The
// key keeps a copy of the table (a backup, a replica) from being a table
// of secrets' hashes to test guesses against.
func MAC(key []byte, secret string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(secret))
	return macPrefix + b64.EncodeToString(m.Sum(nil))
}

// IsMAC reports whether encoded is a MAC encoding, not a Hash one.
func IsMAC(encoded string) bool { return strings.HasPrefix(encoded, macPrefix) }

// VerifyMAC reports whether secret matches encoded, a MAC result under
// key, comparing in constant time.
func VerifyMAC(key []byte, secret, encoded string) (bool, error) {
	want, err := b64.DecodeString(strings.TrimPrefix(encoded, macPrefix))
	if !IsMAC(encoded) || err != nil || len(want) != sha256.Size {
		return false, ErrMalformedHash
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(secret))
	return hmac.Equal(m.Sum(nil), want), nil
}

// NewKey returns 256 random bits, a key for MAC.
func NewKey() []byte {
	k := make([]byte, 32)
	rand.Read(k)
	return k
}

// NewToken returns prefix followed by 256 random bits in unpadded base64url.
// The prefix names the kind of secret ("hdc_rt_" for a refresh token), which
// lets secret scanners and people recognise a leaked one.
func NewToken(prefix string) string {
	b := make([]byte, 32)
	rand.Read(b)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// TokenHash is the lookup key of a NewToken value. A plain SHA-256 suffices:
// the input has 256 bits of entropy, so neither guessing nor timing the
// lookup of the hash tells anything about another token.
func TokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}
