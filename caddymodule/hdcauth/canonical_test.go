package hdcauth

import (
	"testing"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestCanonicalFieldNames checks the header names hdc_auth reads, sets
// and deletes straight in the header map.
func TestCanonicalFieldNames(t *testing.T) {
	testkit.CanonicalFields(t, map[string][]string{
		"hopFields": hopFields,
		"read and set by name": {"Authorization", "Client-Id",
			contract.HeaderClientID, contract.HeaderWorkspaceID, contract.HeaderTokenID, contract.HeaderGrantID,
			contract.HeaderSessionID, contract.HeaderClientIP, contract.HeaderRequestID, contract.HeaderRequestIDAnswer},
	})
}
