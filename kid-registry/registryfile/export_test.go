package registryfile

import "github.com/health-data-connect/hdc/internal/clientkey"

// Test-only helpers.

// ActiveKey returns the client's current key: the newest active one.
func (r *Registry) ActiveKey(clientID string) (*Entry, bool) {
	var best *Entry
	for i := range r.keys {
		k := &r.keys[i]
		if k.ClientID == clientID && k.Status == clientkey.Active && (best == nil || k.CreatedAt.After(best.CreatedAt)) {
			best = k
		}
	}
	return best, best != nil
}
