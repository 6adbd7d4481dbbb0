// Package keyadmin administers the clients' shared encryption keys in the
// backend's store: add, rotate, retire, import and list. The rules are
// internal/clientkey's (the kind a rotation keeps and the leave a weaker one
// needs, the guard of a retirement), applied by the store in the
// transaction of the change, with its audit record; this package turns an
// operator's request into them, and says what a change would do without
// making it (a dry run). The operator's commands (hdc keys, on the store
// directly) and the Admin API call it alike, so that no rule lives in
// either.
package keyadmin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
)

// Store is what the service needs of the backend's store, sealed (package
// sealed): its clients, for a key's workspace, and its keys.
type Store interface {
	GetClient(ctx context.Context, clientID string) (store.Client, error)
	store.ClientKeys
}

// Service administers the keys of a store. It is safe for concurrent use.
type Service struct {
	st  Store
	now func() time.Time
}

// New returns the service over st.
func New(st Store) *Service { return &Service{st: st, now: time.Now} }

// The errors of the service, besides the rules' *clientkey.WeakerError and
// *clientkey.LockOutError.
var (
	// ErrNoClient: no client has the id.
	ErrNoClient = errors.New("keyadmin: no such client")
	// ErrNoKey: no key has the kid.
	ErrNoKey = errors.New("keyadmin: no such key")
	// ErrKidTaken: a key has the kid already.
	ErrKidTaken = errors.New("keyadmin: the kid is taken")
	// ErrNoKeys: a rotation of a client that has no key yet.
	ErrNoKeys = errors.New("keyadmin: the client has no key to rotate; add one")
	// ErrInvalidKey: the key asked for breaks a rule of a key
	// (clientkey.Key.Validate: its kid, its enc, its secret's form), or
	// an A256GCM key not fresh (clientkey.ErrStaleGCM). The error's text
	// is the rule's, and never names the secret.
	ErrInvalidKey = errors.New("keyadmin: the key is invalid")
)

// invalid is a key's breach of a rule: its text is the rule's, and it is
// ErrInvalidKey.
type invalid struct{ error }

// Is makes an invalid ErrInvalidKey.
func (e invalid) Is(target error) bool { return target == ErrInvalidKey }

// Unwrap is the rule's error.
func (e invalid) Unwrap() error { return e.error }

// Invalid returns err, a key's breach of a rule (clientkey.Key.Validate),
// as ErrInvalidKey, its text the rule's; nil when err is nil.
func Invalid(err error) error {
	if err == nil {
		return nil
	}
	return invalid{err}
}

// AddRequest asks for a new active key of a client.
type AddRequest struct {
	// By is the operator the audit record names.
	By     audit.Person
	Client string
	// Kid and Secret of the key; "" for random ones.
	Kid, Secret string
	// Enc is the key's content encryption ("" for A128CBC-HS256), and
	// RequireFresh whether its envelopes must name iat and jti (always so
	// for A256GCM).
	Enc          string
	RequireFresh bool
}

// Add adds an active key for a client and returns it, its secret
// included: the only time it is shown.
func (s *Service) Add(ctx context.Context, r AddRequest) (clientkey.Key, error) {
	if r.By == (audit.Person{}) {
		return clientkey.Key{}, audit.ErrNoPerson
	}
	ws, err := s.workspace(ctx, r.Client)
	if err != nil {
		return clientkey.Key{}, err
	}
	k := clientkey.New(r.Client, r.Kid, r.Secret, r.Enc, r.RequireFresh, s.now())
	if err := k.Validate(); err != nil {
		return k, Invalid(err)
	}
	_, err = s.st.AddClientKey(ctx, store.ClientKey{Key: k, WorkspaceID: ws}, event(audit.KeyAdd, r.By, ws, r.Client, k.Kid, k.CreatedAt))
	return k, taken(err)
}

// workspace returns the workspace of the client id, ErrNoClient when there
// is none.
func (s *Service) workspace(ctx context.Context, id string) (string, error) {
	c, err := s.st.GetClient(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", fmt.Errorf("%w: %q", ErrNoClient, id)
	}
	return c.WorkspaceID, err
}

// taken maps the store's conflict on a new key to ErrKidTaken.
func taken(err error) error {
	if errors.Is(err, store.ErrConflict) {
		return ErrKidTaken
	}
	return err
}

// event is the audit record of operator by's change of the key kid of
// client.
func event(action audit.Action, by audit.Person, workspace, client, kid string, at time.Time) audit.Event {
	return audit.Event{At: at, Action: action, Outcome: audit.Success, Workspace: workspace,
		Entity: audit.Entity{Kind: audit.EntityKey, ID: kid}, Person: by, Owner: audit.KeyOwner(client)}
}

// List returns the keys of client (every client's when empty), in kid
// order, without their secrets.
func (s *Service) List(ctx context.Context, client string) ([]clientkey.Listed, error) {
	var out []clientkey.Listed
	err := s.each(ctx, client, func(k store.ClientKey) { out = append(out, k.Listed()) })
	return out, err
}

// listPage is how many keys a listing reads at a time.
const listPage = 1000

// each calls fn for every key of client (every client's when empty), in
// kid order, without their secrets.
func (s *Service) each(ctx context.Context, client string, fn func(store.ClientKey)) error {
	for after := ""; ; {
		page, err := s.st.ListClientKeys(ctx, store.ClientKeyFilter{ClientID: client, After: after, Limit: listPage})
		if err != nil {
			return err
		}
		for _, k := range page {
			fn(k)
		}
		if len(page) < listPage {
			return nil
		}
		after = page[len(page)-1].Kid
	}
}

// keysOf returns the keys of client, without their secrets.
func (s *Service) keysOf(ctx context.Context, client string) ([]clientkey.Key, error) {
	var keys []clientkey.Key
	err := s.each(ctx, client, func(k store.ClientKey) { keys = append(keys, k.Key) })
	return keys, err
}
