package hdcauth

import (
	"net/textproto"
	"testing"

	"github.com/health-data-connect/hdc/internal/contract"
)

// TestCanonicalFieldNames checks the header names hdc_auth reads, sets
// and deletes straight in the header map: a name that is not canonical
// would never match.
func TestCanonicalFieldNames(t *testing.T) {
	for _, tc := range []struct {
		list  string
		names []string
	}{
		{"hopFields", hopFields},
		{"read and set by name", []string{"Authorization", "Client-Id",
			contract.HeaderClientID, contract.HeaderWorkspaceID, contract.HeaderTokenID, contract.HeaderGrantID,
			contract.HeaderSessionID, contract.HeaderClientIP, contract.HeaderRequestID, contract.HeaderRequestIDAnswer}},
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
