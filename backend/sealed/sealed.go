// Package sealed keeps the secrets of the backend's store sealed at rest:
// the access token signing keys, the key of the client secrets' keyed
// hash, and the subscriptions' webhook signing keys, each under the
// store's data key (package keeper) and bound to its row. Store wraps a
// store.Store, sealing what is written and opening what the backend
// reads; the engines keep only sealed values. The data key also keys the
// audit trail's chain and signs its checkpoints.
//
// Open unwraps the data key once, with one call to the keeper (two when it
// makes the key, at the first start), and never calls the keeper again:
// sealing and opening are local (AES-256-GCM).
package sealed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/keeper"
)

// Derivation purposes of the data key.
const (
	chainPurpose      = "audit chain"
	checkpointPurpose = "audit checkpoint"
)

// Store is a store.Store whose secrets are sealed at rest.
type Store struct {
	store.Store
	key *keeper.DataKey
	log *zap.Logger
	// reported holds the places whose value did not open, each logged
	// once.
	reported sync.Map
}

// ErrKeeper wraps the errors of a keeper that cannot serve the store:
// callers name their setting of it.
var ErrKeeper = errors.New("the keeper")

// Open returns st with its secrets sealed under its data key, which k
// wraps: made and stored at the first start, unwrapped at the others. It
// then seals the secrets an earlier version stored in the clear, compacts
// the store so that none is left in its files, and keys the audit chain.
// A keeper that cannot unwrap the stored data key fails, and nothing is
// changed.
func Open(ctx context.Context, st store.Store, k *keeper.Keeper, log *zap.Logger) (*Store, error) {
	key, err := dataKey(ctx, st, k)
	if err != nil {
		return nil, err
	}
	s := &Store{Store: st, key: key, log: log}
	if err := s.sealPlain(ctx); err != nil {
		return nil, err
	}
	st.KeyAudit(audit.NewChain(key.Derive(chainPurpose)))
	return s, nil
}

// dataKey returns the store's data key, making it when there is none.
func dataKey(ctx context.Context, st store.DataKeys, k *keeper.Keeper) (*keeper.DataKey, error) {
	wk, err := st.DataKey(ctx)
	if errors.Is(err, store.ErrNotFound) {
		var fresh *keeper.DataKey
		if fresh, err = addDataKey(ctx, st, k); fresh != nil || !errors.Is(err, store.ErrConflict) {
			return fresh, err
		}
		wk, err = st.DataKey(ctx) // another process made it first
	}
	if err != nil {
		return nil, fmt.Errorf("the store's data key: %w", err)
	}
	key, err := k.Unwrap(ctx, wk.ID, wk.Wrapped)
	if err != nil {
		return nil, fmt.Errorf("%w: the store's data key %s: %w", ErrKeeper, wk.ID, err)
	}
	return key, nil
}

// addDataKey makes a data key and stores it wrapped; the error is
// store.ErrConflict when another process stored one first.
func addDataKey(ctx context.Context, st store.DataKeys, k *keeper.Keeper) (*keeper.DataKey, error) {
	fresh := keeper.NewDataKey()
	wrapped, err := k.Wrap(ctx, fresh)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeeper, err)
	}
	if err := st.AddDataKey(ctx, store.WrappedKey{ID: fresh.ID(), Wrapped: wrapped, Keeper: k.ID(), CreatedAt: time.Now()}); err != nil {
		return nil, err
	}
	return fresh, nil
}

// sealPlain seals in place every secret stored in the clear, and then
// compacts the store.
func (s *Store) sealPlain(ctx context.Context) error {
	secrets, err := s.Store.Secrets(ctx)
	if err != nil {
		return err
	}
	n := 0
	for _, sec := range secrets {
		if keeper.IsSealed(sec.Value) {
			continue
		}
		err := s.Store.ReplaceSecret(ctx, sec, s.seal(sec.Kind, sec.ID, []byte(sec.Value)))
		switch {
		case errors.Is(err, store.ErrConflict): // another process sealed it
		case err != nil:
			return err
		default:
			n++
		}
	}
	if n == 0 {
		return nil
	}
	s.log.Info("sealed the secrets an earlier version stored in the clear", zap.Int("secrets", n))
	return s.Store.Compact(ctx)
}

// seal seals plain for its place.
func (s *Store) seal(kind store.SecretKind, id string, plain []byte) string {
	return s.key.Seal(plain, string(kind), id)
}

// open opens the sealed value of a place; a value that does not open is
// logged, once per place, without the value.
func (s *Store) open(kind store.SecretKind, id, sealed string) ([]byte, error) {
	plain, err := s.key.Open(sealed, string(kind), id)
	if err != nil {
		if _, seen := s.reported.LoadOrStore(string(kind)+"\x00"+id, true); !seen {
			s.log.Error("a stored secret does not open under the store's data key; what needs it fails",
				zap.String("kind", string(kind)), zap.String("id", id))
		}
		return nil, fmt.Errorf("the %s of %s: %w", kind, id, err)
	}
	return plain, nil
}

// CheckpointKey returns the key that signs the audit trail's checkpoints.
func (s *Store) CheckpointKey() []byte { return s.key.Derive(checkpointPurpose) }
