package sealed

import (
	"context"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// AddClientKey implements store.Store: the secret is stored sealed.
func (s *Store) AddClientKey(ctx context.Context, k store.ClientKey, e audit.Event) (store.ClientKey, error) {
	k, err := s.Store.AddClientKey(ctx, s.sealClientKey(k), e)
	k.Secret = ""
	return k, err
}

// RotateClientKey implements store.Store: the secret is stored sealed.
func (s *Store) RotateClientKey(ctx context.Context, k store.ClientKey, weaken bool, e audit.Event) (store.ClientKey, error) {
	k, err := s.Store.RotateClientKey(ctx, s.sealClientKey(k), weaken, e)
	k.Secret = ""
	return k, err
}

// ImportClientKeys implements store.Store: the secrets are stored sealed.
func (s *Store) ImportClientKeys(ctx context.Context, keys []store.ClientKey, events []audit.Event) error {
	sealed := make([]store.ClientKey, len(keys))
	for i, k := range keys {
		sealed[i] = s.sealClientKey(k)
	}
	return s.Store.ImportClientKeys(ctx, sealed, events)
}

// ClientKey implements store.Store: the secret opened. A secret that does
// not open is an error, logged once.
func (s *Store) ClientKey(ctx context.Context, kid string) (store.ClientKey, error) {
	k, err := s.Store.ClientKey(ctx, kid)
	if err != nil {
		return k, err
	}
	plain, err := s.open(store.SecretClientKey, k.Kid, k.Secret)
	k.Secret = string(plain)
	return k, err
}

// RetireClientKey implements store.Store: the secret is not returned.
func (s *Store) RetireClientKey(ctx context.Context, kid string, force bool, now time.Time, e audit.Event) (store.ClientKey, error) {
	k, err := s.Store.RetireClientKey(ctx, kid, force, now, e)
	k.Secret = ""
	return k, err
}

// sealClientKey returns k with its secret sealed for its kid.
func (s *Store) sealClientKey(k store.ClientKey) store.ClientKey {
	k.Secret = s.seal(store.SecretClientKey, k.Kid, []byte(k.Secret))
	return k
}
