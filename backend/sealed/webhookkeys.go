package sealed

import (
	"context"
	"errors"

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

// FillSigningKeys gives every subscription stored without a signing key
// (versions before every delivery was signed made them) a key generate
// makes, sealed for its place as every key is, and returns how many it
// gave. A key is stored only where the row still has none, so that two
// backends starting at once give a subscription one key between them, and
// a start after it finds nothing to do. The receivers, which verified
// nothing, are unaffected; a client learns its key by setting or rotating
// it.
func (s *Store) FillSigningKeys(ctx context.Context, generate func() string) (int, error) {
	ids, err := s.Store.KeylessSubscriptions(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		err := s.Store.FillSigningKey(ctx, id, s.seal(store.SecretWebhookKey, id, []byte(generate())))
		switch {
		case errors.Is(err, store.ErrConflict): // another process gave it one, or it is gone
		case err != nil:
			return n, err
		default:
			n++
		}
	}
	return n, nil
}
