package sealed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/keeper"
)

// Rewrap wraps the store's data key under to instead of from and returns
// its id, reporting whether it changed the store. A store whose data key
// to already wraps (keeper.Keeper.ID) is left as it is, so that an
// interrupted rewrap is run again safely. The data key itself stays:
// every sealed value, and the audit chain's key, are unchanged, and
// processes serving with the data key in memory go on.
func Rewrap(ctx context.Context, st store.DataKeys, from, to *keeper.Keeper) (id string, changed bool, err error) {
	wk, err := st.DataKey(ctx)
	if err != nil {
		return "", false, fmt.Errorf("the store's data key: %w", err)
	}
	if wk.Keeper == to.ID() {
		return wk.ID, false, nil
	}
	key, err := from.Unwrap(ctx, wk.ID, wk.Wrapped)
	if err != nil {
		return "", false, fmt.Errorf("%w: the store's data key %s, with the current keeper: %w", ErrKeeper, wk.ID, err)
	}
	wrapped, err := to.Wrap(ctx, key)
	if err != nil {
		return "", false, fmt.Errorf("%w: the new keeper: %w", ErrKeeper, err)
	}
	if err := st.RewrapDataKey(ctx, wk.Wrapped, store.WrappedKey{ID: wk.ID, Wrapped: wrapped, Keeper: to.ID()}); err != nil {
		return "", false, err
	}
	return wk.ID, true, nil
}

// RewrapStore wraps the data key of st, the backend's database, under the
// keeper to instead of from (Rewrap), and records the rewrap, when it
// changed anything, in the installation's audit trail in the name of by
// (RecordRewrap). It returns st sealed under to, whose trail records the
// rewraps of the data keys it does not hold (a registry file's), the data
// key's id, and whether it changed anything.
func RewrapStore(ctx context.Context, st store.Store, from, to *keeper.Keeper, by audit.Person) (*Store, string, bool, error) {
	if by == (audit.Person{}) {
		return nil, "", false, audit.ErrNoPerson
	}
	id, changed, err := Rewrap(ctx, st, from, to)
	if err != nil {
		return nil, id, changed, err
	}
	// Recorded under the new keeper, which keys the chain as the old did.
	trail, err := Open(ctx, st, to, zap.NewNop())
	if err != nil {
		return nil, id, changed, err
	}
	if changed {
		err = trail.RecordRewrap(ctx, by, id)
	}
	return trail, id, changed, err
}

// RecordRewrap appends to the installation's audit trail that by wrapped
// the data key id under another keeper: the store's (RewrapStore) or a
// registry file's. Each rewrap is recorded as soon as it is made, so that
// a rewrap interrupted between two data keys is recorded as far as it
// went; the error of a record that fails says that the data key is
// rewrapped all the same.
func (s *Store) RecordRewrap(ctx context.Context, by audit.Person, id string) error {
	_, err := s.AppendAudit(ctx, audit.Event{At: time.Now(), Action: audit.KeeperRewrap, Outcome: audit.Success, Person: by,
		Entity: audit.Entity{Kind: audit.EntityDataKey, ID: id}})
	if err != nil {
		return errors.Join(fmt.Errorf("data key %s is rewrapped; recording it in the audit trail failed", id), err)
	}
	return nil
}
