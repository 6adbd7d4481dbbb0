package keyadmin

import (
	"context"
	"errors"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
)

// RotateRequest asks for a rotation of a client's keys: a new active key,
// and its active keys retiring.
type RotateRequest struct {
	// By is the operator the audit record names.
	By     audit.Person
	Client string
	// Enc is the new key's content encryption, "" to keep the kind of the
	// key it replaces (clientkey.NextKind); RequireFresh, when set,
	// whether its envelopes must name iat and jti, nil to keep it.
	Enc          string
	RequireFresh *bool
	// AllowWeaker lets the new key be of a weaker kind than the key it
	// replaces (A128CBC-HS256 for A256GCM, not fresh for fresh); the
	// rotation's audit record then says what it gave up.
	AllowWeaker bool
	// DryRun says what the rotation would do, and changes nothing.
	DryRun bool
}

// Rotation is what a rotation did, or would do.
type Rotation struct {
	// Key is the new active key, with its secret when the rotation was
	// made (the only time it is shown), without in a dry run.
	Key clientkey.Key
	// Retiring are the kids of the keys the rotation moves to retiring.
	Retiring []string
	// Lost is what the new key gives up against the key it replaces
	// (clientkey.LostEnc, clientkey.LostFreshness), which AllowWeaker
	// allowed.
	Lost   []string
	DryRun bool
}

// Rotate rotates the keys of a client, or says what a rotation would do.
// A new key weaker than the key it replaces, not allowed, is refused with
// a *clientkey.WeakerError, in a dry run too; the store holds the rule
// again when it makes the change.
func (s *Service) Rotate(ctx context.Context, r RotateRequest) (Rotation, error) {
	if r.By == (audit.Person{}) {
		return Rotation{}, audit.ErrNoPerson
	}
	ws, err := s.workspace(ctx, r.Client)
	if err != nil {
		return Rotation{}, err
	}
	keys, err := s.keysOf(ctx, r.Client)
	if err != nil {
		return Rotation{}, err
	}
	kind, err := clientkey.NextKind(keys, r.Enc, r.RequireFresh)
	if err != nil {
		return Rotation{}, Invalid(err)
	}
	next := clientkey.New(r.Client, "", "", kind.Enc, kind.Fresh, s.now())
	if err := next.Validate(); err != nil {
		return Rotation{}, Invalid(err)
	}
	plan, err := clientkey.Rotate(keys, next, r.AllowWeaker, next.CreatedAt)
	if errors.Is(err, clientkey.ErrNoKeys) {
		return Rotation{}, ErrNoKeys
	}
	if err != nil {
		return Rotation{}, err
	}
	out := Rotation{Key: plan.Added, Lost: plan.Lost, DryRun: r.DryRun}
	for _, c := range plan.Changed {
		out.Retiring = append(out.Retiring, c.Kid)
	}
	if r.DryRun {
		out.Key.Secret = ""
		return out, nil
	}
	_, err = s.st.RotateClientKey(ctx, store.ClientKey{Key: next, WorkspaceID: ws}, r.AllowWeaker,
		event(audit.KeyRotate, r.By, ws, r.Client, next.Kid, next.CreatedAt))
	if errors.Is(err, store.ErrNotFound) {
		return Rotation{}, ErrNoKeys
	}
	return out, taken(err)
}
