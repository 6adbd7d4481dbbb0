package registryfile

import (
	"cmp"
	"encoding/json"
	"testing"

	"github.com/health-data-connect/hdc/internal/jwe"
)

// FuzzParse feeds arbitrary bytes to the registry parser: it must not panic,
// whatever it accepts must hold up under the registry's own rules, and
// each key must be of the enc its entry names (A128CBC-HS256 when none)
// and need freshness when its entry requires it: never a weaker key than
// the file says.
func FuzzParse(f *testing.F) {
	f.Add([]byte(validFile))
	f.Add([]byte(kindsFile))
	f.Add([]byte(`{"keys":[]}`))
	f.Add([]byte(`{"keys":[{"kid":"a","client_id":"b","secret":"0123456789abcdef","status":"active","created_at":"2026-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"keys":[{"kid":"a","client_id":"b","enc":"A128CBC-HS256","require_fresh":true,"secret":"0123456789abcdef","status":"active","created_at":"2026-01-01T00:00:00Z"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data, nil)
		if err != nil {
			return
		}
		var said fileForm // what the file says, as encoding/json reads what strictjson accepted
		if err := json.Unmarshal(data, &said); err != nil || len(said.Keys) != r.Len() {
			t.Fatalf("accepted a file encoding/json reads otherwise: %v", err)
		}
		for i, k := range r.Keys() {
			got, ok := r.Lookup(k.Kid)
			if !ok || got.ClientID != k.ClientID || got.Secret == "" || got.Key.Validate() != nil {
				t.Fatalf("accepted an inconsistent key %+v", k.Kid)
			}
			entry := said.Keys[i]
			if got.ContentEncryption() != cmp.Or(entry.Enc, jwe.EncA128CBCHS256) || entry.RequireFresh && !got.NeedsFreshness() {
				t.Fatalf("key %q is %s, needing freshness %v; its entry says enc %q, require_fresh %v",
					k.Kid, got.ContentEncryption(), got.NeedsFreshness(), entry.Enc, entry.RequireFresh)
			}
		}
	})
}
