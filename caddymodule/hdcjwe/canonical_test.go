package hdcjwe

import (
	"testing"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestCanonicalFieldNames checks the header names hdc_jwe reads, sets and
// deletes straight in the header map.
func TestCanonicalFieldNames(t *testing.T) {
	testkit.CanonicalFields(t, map[string][]string{
		"plaintextFields":    plaintextFields,
		"jweFields":          jweFields,
		"encrypted response": {"Content-Type", "Content-Length", contract.HeaderEncryption, "Cache-Control"},
		"acceptedDropped":    acceptedDropped,
		"read and set by name": {"Accept", "Transfer-Encoding", contract.HeaderKeyID, contract.HeaderKeyClientID,
			contract.HeaderEncryptionKid},
	})
}
