package keyadmin

import (
	"context"
	"errors"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
)

// RetireRequest asks for a key's retirement: its requests are refused from
// then on.
type RetireRequest struct {
	// By is the operator the audit record names.
	By  audit.Person
	Kid string
	// Force retires a client's last active key, or its last key, which
	// the guard refuses otherwise (clientkey.CheckRetire).
	Force bool
	// DryRun says what the retirement would do, and changes nothing.
	DryRun bool
}

// Retirement is what a retirement did, or would do.
type Retirement struct {
	// Key is the key as retired.
	Key clientkey.Listed
	// Changed: the key was not retired already.
	Changed bool
	DryRun  bool
}

// Retire retires a key, or says what its retirement would do. The
// retirement of a client's last active key, not forced, is refused with a
// *clientkey.LockOutError, in a dry run too; the store holds the guard
// again when it makes the change.
func (s *Service) Retire(ctx context.Context, r RetireRequest) (Retirement, error) {
	if r.By == (audit.Person{}) {
		return Retirement{}, audit.ErrNoPerson
	}
	found, err := s.st.ListClientKeys(ctx, store.ClientKeyFilter{Kid: r.Kid, Limit: 1})
	if err != nil {
		return Retirement{}, err
	}
	if len(found) == 0 {
		return Retirement{}, ErrNoKey
	}
	var keys []store.ClientKey
	if err := s.each(ctx, found[0].ClientID, func(k store.ClientKey) { keys = append(keys, k) }); err != nil {
		return Retirement{}, err
	}
	now := s.now()
	plan, changed, err := store.Retirement(keys, r.Kid, r.Force, now)
	if err != nil {
		return Retirement{}, err
	}
	if !r.DryRun {
		plan, err = s.st.RetireClientKey(ctx, r.Kid, r.Force, now, event(audit.KeyRetire, r.By, found[0].WorkspaceID, found[0].ClientID, r.Kid, now))
	}
	return Retirement{Key: plan.Listed(), Changed: changed, DryRun: r.DryRun}, notFound(err)
}

// notFound maps the store's ErrNotFound of a key to ErrNoKey.
func notFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return ErrNoKey
	}
	return err
}
