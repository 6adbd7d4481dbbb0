package storage

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/sealed"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/keeper"
)

// KeeperSetting names the keeper's setting as hdc-backend and hdc's
// commands both take it, for the errors that concern it.
const KeeperSetting = "--keeper (HDC_KEEPER)"

// Seal returns st with its secrets sealed under its data key, which the
// keeper keeperURL names wraps (package sealed): the server and the hdc
// commands that open the store (Database) share it. The keeper is called
// once or twice, then closed: the data key stays in memory. A subscription
// an earlier version stored without a signing key is given one, sealed
// (sealed.Store.FillSigningKeys): every delivery is signed. On failure st
// is closed, and an error of the keeper names its setting (KeeperSetting).
func Seal(ctx context.Context, st store.Store, keeperURL string, log *zap.Logger) (*sealed.Store, error) {
	s, err := seal(ctx, st, keeperURL, log)
	if err != nil {
		st.Close()
		return nil, err
	}
	return s, nil
}

func seal(ctx context.Context, st store.Store, keeperURL string, log *zap.Logger) (*sealed.Store, error) {
	if keeperURL == "" {
		return nil, fmt.Errorf("%s is required: it wraps the data key that seals every secret the store keeps", KeeperSetting)
	}
	k, err := keeper.Open(ctx, keeperURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", KeeperSetting, err)
	}
	defer k.Close()
	s, err := sealed.Open(ctx, st, k, log)
	if errors.Is(err, sealed.ErrKeeper) {
		return nil, fmt.Errorf("%s: %w", KeeperSetting, err)
	}
	if err != nil {
		return nil, err
	}
	n, err := s.FillSigningKeys(ctx, webhook.GenerateSigningKey)
	if err != nil {
		return nil, fmt.Errorf("giving the subscriptions stored without a signing key one: %w", err)
	}
	if n > 0 {
		log.Info("gave a signing key to the subscriptions an earlier version stored without one; their clients learn it by rotating it",
			zap.Int("subscriptions", n))
	}
	return s, nil
}
