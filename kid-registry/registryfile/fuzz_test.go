package registryfile

import (
	"testing"

	"github.com/health-data-connect/hdc/internal/clientkey"
)

// FuzzParse feeds arbitrary bytes to the registry parser: it must not panic,
// and whatever it accepts must hold up under the registry's own rules.
func FuzzParse(f *testing.F) {
	f.Add([]byte(validFile))
	f.Add([]byte(`{"keys":[]}`))
	f.Add([]byte(`{"keys":[{"kid":"a","client_id":"b","secret":"0123456789abcdef","status":"active","created_at":"2026-01-01T00:00:00Z"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data, nil)
		if err != nil {
			return
		}
		for _, k := range r.Keys() {
			got, ok := r.Lookup(k.Kid)
			if !ok || got.ClientID != k.ClientID || len(got.Secret) != clientkey.SecretSize || !clientkey.ValidKid(got.Kid) {
				t.Fatalf("accepted an inconsistent key %+v", k.Kid)
			}
		}
	})
}
