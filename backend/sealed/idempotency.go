package sealed

import (
	"context"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// BeginIdempotent implements store.Store, opening the answer the claim
// holds.
func (s *Store) BeginIdempotent(ctx context.Context, k store.IdempotencyKey, hash []byte, now, expire time.Time) (store.Idempotent, bool, error) {
	held, began, err := s.Store.BeginIdempotent(ctx, k, hash, now, expire)
	if err != nil || began || held.Body == nil {
		return held, began, err
	}
	held.Body, err = s.open(store.SecretIdempotentAnswer, idempotentPlace(k), string(held.Body))
	return held, began, err
}

// FinishIdempotent implements store.Store, sealing the answer.
func (s *Store) FinishIdempotent(ctx context.Context, k store.IdempotencyKey, status int, body []byte) error {
	return s.Store.FinishIdempotent(ctx, k, status, []byte(s.seal(store.SecretIdempotentAnswer, idempotentPlace(k), body)))
}

// idempotentPlace is the place an answer is sealed for: its person's key.
func idempotentPlace(k store.IdempotencyKey) string { return k.Person + "\x00" + k.Key }
