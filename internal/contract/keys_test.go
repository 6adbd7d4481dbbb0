package contract

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/clientkey"
)

// TestWireKey: a key goes on the wire as the key plane's answer names its
// members, and comes back as it went, whatever its dates.
func TestWireKey(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		key     clientkey.Key
		members []string
	}{
		{"active", clientkey.Key{Kid: "k1", ClientID: "c1", Secret: "0123456789abcdef", Enc: "A128CBC-HS256",
			Status: clientkey.Active, CreatedAt: created},
			[]string{"client_id", "created_at", "enc", "kid", "require_fresh", "secret", "seq", "status"}},
		{"retired", clientkey.Key{Kid: "k2", ClientID: "c1", Secret: "0123456789abcdef", Enc: "A128CBC-HS256", RequireFresh: true,
			Status: clientkey.Retired, CreatedAt: created, RetiringAt: created.Add(time.Hour), RetiredAt: created.Add(2 * time.Hour)},
			[]string{"client_id", "created_at", "enc", "kid", "require_fresh", "retired_at", "retiring_at", "secret", "seq", "status"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := json.Marshal(WireKey(tt.key, 7))
			if err != nil {
				t.Fatal(err)
			}
			var members map[string]json.RawMessage
			if err := json.Unmarshal(b, &members); err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(members)); !slices.Equal(got, tt.members) {
				t.Errorf("%s has the members %q, want %q", b, got, tt.members)
			}
			var back ClientKey
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if got := back.Key(); got != tt.key || back.Seq != 7 {
				t.Errorf("%s came back as %+v, seq %d; want %+v, seq 7", b, got, back.Seq, tt.key)
			}
		})
	}
}
