package hdcjwe

import (
	"net/textproto"
	"testing"

	"github.com/health-data-connect/hdc/internal/contract"
)

// TestCanonicalFieldNames checks the header names hdc_jwe reads, sets and
// deletes straight in the header map: a name that is not canonical would
// never match.
func TestCanonicalFieldNames(t *testing.T) {
	for _, tc := range []struct {
		list  string
		names []string
	}{
		{"plaintextFields", plaintextFields},
		{"jweFields", jweFields},
		{"encrypted response", []string{"Content-Type", "Content-Length", contract.HeaderEncryption, "Cache-Control"}},
		{"acceptedDropped", acceptedDropped},
		{"read and set by name", []string{"Accept", "Transfer-Encoding", contract.HeaderKeyID, contract.HeaderKeyClientID,
			contract.HeaderEncryptionKid}},
	} {
		t.Run(tc.list, func(t *testing.T) {
			for _, name := range tc.names {
				if c := textproto.CanonicalMIMEHeaderKey(name); c != name {
					t.Errorf("%q is not canonical: %q", name, c)
				}
			}
		})
	}
}
