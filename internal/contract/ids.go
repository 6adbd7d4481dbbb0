package contract

import (
	"regexp"
	"strings"

	"github.com/google/uuid"
)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidID reports whether s has the syntax of a workspace or client id:
// 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit.
// The backend refuses identity headers whose ids fail it.
func ValidID(s string) bool { return idPattern.MatchString(s) }

// IsUUID reports whether s is a UUID in canonical form (lowercase, with
// hyphens), the form of every client id, token id (jti) and record id the
// backend makes. Logs record an id a client supplied only when it passes:
// a secret pasted into an id field is never written.
func IsUUID(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && u.String() == s
}

// JTI lengths: a request's jti is at least 16 characters (a client puts at
// least 128 bits of randomness in it) and at most 128.
const (
	MinJTI = 16
	MaxJTI = 128
)

// ValidJTI reports whether s can be an encrypted request's jti: MinJTI to
// MaxJTI printable ASCII characters (no space).
func ValidJTI(s string) bool {
	if len(s) < MinJTI || len(s) > MaxJTI {
		return false
	}
	for i := range len(s) {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// MaxPersonName is the longest name of a person: a certificate subject's
// common name holds 64 characters (RFC 5280, ub-common-name).
const MaxPersonName = 64

// ValidPersonName reports whether s can name a person, an operator or an
// auditor (an address such as alice@example.org, or user@host): 1 to
// MaxPersonName ASCII letters, digits, '@', '.', '-', '_' and '+'. The
// names are written in certificates, audit records and file names, so the
// set leaves out spaces, path separators, quotes and control characters.
func ValidPersonName(s string) bool {
	if len(s) == 0 || len(s) > MaxPersonName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("@.-_+", c) >= 0) {
			return false
		}
	}
	return true
}
