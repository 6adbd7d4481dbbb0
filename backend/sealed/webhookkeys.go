package sealed

import (
	"context"

	"github.com/health-data-connect/hdc/backend/store"
)

// RotateSigningKey implements store.Store: the new key is stored sealed;
// the current one, sealed for the same place, becomes the previous key
// as it is.
func (s *Store) RotateSigningKey(ctx context.Context, workspaceID, id string, r store.SigningKeyChange) error {
	if r.Key != "" {
		r.Key = s.seal(store.SecretWebhookKey, id, []byte(r.Key))
	}
	return s.Store.RotateSigningKey(ctx, workspaceID, id, r)
}

// OpenKeys returns sub, read from the store, with its signing key and
// previous key opened. A key that does not open leaves
// Subscription.SigningKeyErr set: what would be signed with it is given
// up, never sent unsigned or with one signature missing.
func (s *Store) OpenKeys(sub store.Subscription) store.Subscription {
	for _, k := range []*string{&sub.SigningKey, &sub.PreviousSigningKey} {
		if *k == "" || sub.SigningKeyErr != nil {
			continue
		}
		plain, err := s.open(store.SecretWebhookKey, sub.ID, *k)
		*k, sub.SigningKeyErr = string(plain), err
	}
	return sub
}
