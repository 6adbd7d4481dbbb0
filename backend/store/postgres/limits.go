package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// SetClientLimits implements store.Store.
func (s *Store) SetClientLimits(ctx context.Context, clientID string, l contract.Limits, e audit.Event) error {
	return s.keyChange(ctx, &e, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM clients WHERE id = $1`, clientID).Scan(&one); err != nil {
			return notFound(err)
		}
		seq, err := nextKeySeq(ctx, tx)
		if err != nil {
			return err
		}
		before, _, err := scanLimits(tx.QueryRow(ctx, `SELECT limits FROM client_limits WHERE client_id = $1`, clientID))
		if err != nil {
			return err
		}
		e.Changes = store.LimitsChanges(before, l)
		_, err = tx.Exec(ctx, `
			INSERT INTO client_limits (client_id, limits, seq, updated_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (client_id) DO UPDATE SET limits = $2, seq = $3, updated_at = $4`,
			clientID, store.LimitsJSON(l), seq, ts(e.At))
		return err
	})
}

// ClientLimits implements store.Store.
func (s *Store) ClientLimits(ctx context.Context, clientID string) (contract.Limits, bool, error) {
	return scanLimits(s.pool.QueryRow(ctx, `SELECT limits FROM client_limits WHERE client_id = $1`, clientID))
}

// scanLimits reads a client's limits from row, none when there is no row.
func scanLimits(row pgx.Row) (contract.Limits, bool, error) {
	var raw string
	err := row.Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return contract.Limits{}, false, nil
	}
	if err != nil {
		return contract.Limits{}, false, err
	}
	return store.ParseLimitsJSON(raw)
}

// ListClientLimits implements store.Store.
func (s *Store) ListClientLimits(ctx context.Context, after string, limit int) ([]contract.ClientLimits, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT client_id, limits FROM client_limits WHERE client_id > $1 AND limits <> '{}'
		ORDER BY client_id LIMIT $2`, after, limit)
	return collect(rows, err, func(r pgx.Row) (contract.ClientLimits, error) {
		var c contract.ClientLimits
		var raw string
		if err := r.Scan(&c.ClientID, &raw); err != nil {
			return c, err
		}
		var err error
		c.Limits, _, err = store.ParseLimitsJSON(raw)
		return c, err
	})
}
