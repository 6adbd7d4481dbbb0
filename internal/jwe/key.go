package jwe

import (
	"errors"
	"unicode/utf8"

	"github.com/health-data-connect/hdc/internal/jwe/cbchmac"
)

// Algorithm identifiers of the transport. They form the allow-list that
// envelopes are checked against; adding a method means adding it here and
// teaching NewKey about it.
const (
	AlgDir          = "dir"
	EncA128CBCHS256 = "A128CBC-HS256"
	// SharedKeySize is the length in bytes of a shared key string for
	// A128CBC-HS256.
	SharedKeySize = cbchmac.KeySize / 2
)

// ErrKeySize reports a shared key string that is not exactly SharedKeySize
// bytes of UTF-8.
var ErrKeySize = errors.New("jwe: shared key must be exactly 16 bytes of UTF-8")

// ErrDecrypt is the single error for every cryptographic failure of
// opening an envelope: the tag does not verify, the padding is bad. It
// stands for cbchmac.ErrDecrypt, under the name a user of the transport
// knows.
var ErrDecrypt = errors.New("jwe: decryption failed")

// NewKey derives the content-encryption key from a shared key string as the
// specification says: the UTF-8 bytes of the string concatenated with
// itself. The string must be exactly 16 bytes long, so the MAC key equals
// the AES key; see the README's security notes.
func NewKey(shared string) (*cbchmac.Key, error) {
	if len(shared) != SharedKeySize || !utf8.ValidString(shared) {
		return nil, ErrKeySize
	}
	return cbchmac.NewKey([]byte(shared + shared))
}
