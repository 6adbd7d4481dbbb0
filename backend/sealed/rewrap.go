package sealed

import (
	"context"
	"fmt"

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
