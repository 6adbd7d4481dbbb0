// Package registryadmin administers the keys of a registry file, the keys
// of a standalone edge (kid-registry/registryfile), as package keyadmin
// administers the database's: add, rotate, retire, list, look up, and
// import into the database. It implements the key operations of the Admin
// API (adminapi.Keys), acting for the person of the context, and answers
// refusals with keyadmin's problems, so that hdc keys --registry asks it
// as the other modes ask the API and prints the same. The rules are
// clientkey's, applied by the file's edits (registryfile.File); this
// package records each change in the backend's audit trail in the order
// that keeps the trail and the file agreeing (Service.update).
package registryadmin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// Trail is what the service needs of the backend's database: the
// clients, for the workspace of a key's client, and the audit trail.
type Trail interface {
	GetClient(ctx context.Context, id string) (store.Client, error)
	store.AuditAppender
}

// Service administers the keys of the registry file at a path. It is safe
// for concurrent use, as is the file: each change is made under its lock.
type Service struct {
	path   string
	sealer *registryfile.Sealer
	trail  Trail
	now    func() time.Time
	// Unaudited, when set, is told of each change made without a trail
	// to record it in: the command line says so.
	Unaudited func(audit.Action)
}

var _ adminapi.Keys = (*Service)(nil)

// New returns the administration of the registry file at path: its
// secrets opened and sealed by sealer (nil: it lists and looks up, and
// refuses changes, registryfile.ErrNoKeeper), each change recorded in
// trail (nil: there is no backend database where the registry is kept,
// and changes are made unaudited).
func New(path string, sealer *registryfile.Sealer, trail Trail) *Service {
	return &Service{path: path, sealer: sealer, trail: trail, now: time.Now}
}

// change is what an edit of the file changed, as its audit record says
// it: the key, its client, and for a rotation the keys it moved to
// retiring and what the new key gave up.
type change struct {
	kid, client        string
	replaced, weakened []string
}

// errDryRun ends an edit that only says what it would change: nothing is
// written, and nothing recorded.
var errDryRun = errors.New("registryadmin: a dry run")

// update applies edit to the file, and records the change it returns in
// the audit trail as action, in the name of ctx's person; a dry run's edit
// returns errDryRun.
//
// The order: the record is appended under the file's lock once the edited
// registry validates, and before the file is written, so that a record
// that fails leaves the file unchanged and fails the change. Should
// writing the file then fail, a record of the same action with outcome
// "failed" follows, and the error says whether it was written too. Without
// a trail the change is made unaudited, and Unaudited told.
func (s *Service) update(ctx context.Context, action audit.Action, edit func(*registryfile.File) (change, error)) error {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return err
	}
	var ev audit.Event
	recorded := false
	err = registryfile.Update(s.path, s.sealer, func(f *registryfile.File) error {
		c, err := edit(f)
		if err == nil {
			err = f.Validate()
		}
		if err != nil || s.trail == nil {
			return err
		}
		if ev, err = s.event(ctx, action, by, c); err == nil {
			_, err = s.trail.AppendAudit(ctx, ev)
		}
		if err != nil {
			return fmt.Errorf("recording the key change in the audit trail: %w; the registry is unchanged", err)
		}
		recorded = true
		return nil
	})
	switch {
	case err != nil && recorded:
		err = errors.Join(err, s.recordFailure(ctx, ev))
	case err == nil && s.trail == nil && s.Unaudited != nil:
		s.Unaudited(action)
	}
	return err
}

// event is the record of by's change c: in the trail of the workspace of
// the key's client, or the installation's ("") when the database has no
// such client.
func (s *Service) event(ctx context.Context, action audit.Action, by audit.Person, c change) (audit.Event, error) {
	client, err := s.trail.GetClient(ctx, c.client)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return audit.Event{}, err
	}
	return audit.Event{At: s.now(), Action: action, Outcome: audit.Success, Workspace: client.WorkspaceID, Person: by,
		Entity: audit.Entity{Kind: audit.EntityKey, ID: c.kid}, Replaced: c.replaced, Weakened: c.weakened,
		Owner: audit.KeyOwner(c.client)}, nil
}

// recordFailure appends ev again, its outcome failed: the change it
// recorded was not written. Its error says that the trail holds a record
// of a change that failed.
func (s *Service) recordFailure(ctx context.Context, ev audit.Event) error {
	ev.At, ev.Outcome = s.now(), audit.Failed
	if _, err := s.trail.AppendAudit(ctx, ev); err != nil {
		return fmt.Errorf("the audit trail records %s of key %q, which failed, and recording the failure failed too: %w",
			ev.Action, ev.Entity.ID, err)
	}
	return nil
}
