package sealed

import (
	"context"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// AddSigningKey implements store.Store: the seed is stored sealed.
func (s *Store) AddSigningKey(ctx context.Context, k store.SigningKey) error {
	k.Seed = []byte(s.seal(store.SecretSigningKey, k.ID, k.Seed))
	return s.Store.AddSigningKey(ctx, k)
}

// ListSigningKeys implements store.Store: the seeds opened. A key whose
// seed does not open is left out, and logged once.
func (s *Store) ListSigningKeys(ctx context.Context) ([]store.SigningKey, error) {
	keys, err := s.Store.ListSigningKeys(ctx)
	if err != nil {
		return nil, err
	}
	out := keys[:0]
	for _, k := range keys {
		if k.Seed, err = s.open(store.SecretSigningKey, k.ID, string(k.Seed)); err == nil {
			out = append(out, k)
		}
	}
	return out, nil
}

// HashKey implements store.Store: the key is stored sealed.
func (s *Store) HashKey(ctx context.Context, name string, fresh []byte, now time.Time) ([]byte, error) {
	sealed, err := s.Store.HashKey(ctx, name, []byte(s.seal(store.SecretHashKey, name, fresh)), now)
	if err != nil {
		return nil, err
	}
	return s.open(store.SecretHashKey, name, string(sealed))
}

// CreateSubscription implements store.Store: the signing key is stored
// sealed.
func (s *Store) CreateSubscription(ctx context.Context, sub store.Subscription, max int, e audit.Event) error {
	if sub.SigningKey != "" {
		sub.SigningKey = s.seal(store.SecretWebhookKey, sub.ID, []byte(sub.SigningKey))
	}
	return s.Store.CreateSubscription(ctx, sub, max, e)
}

// ClaimDeliveries implements store.Store: each delivery's signing keys
// opened (OpenKeys).
func (s *Store) ClaimDeliveries(ctx context.Context, c store.Claim) ([]store.Delivery, error) {
	ds, err := s.Store.ClaimDeliveries(ctx, c)
	for i := range ds {
		ds[i].Subscription = s.OpenKeys(ds[i].Subscription)
	}
	return ds, err
}
