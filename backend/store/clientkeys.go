package store

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/clientkey"
)

// ClientKeys is the key plane's store: the clients' shared encryption
// keys, which the edges look up by kid, and the sequence of their changes,
// which the edges follow. Every change is made in one transaction with its
// audit record and takes the next number of one sequence; the changes of
// concurrent transactions are numbered in their commit order, so that a
// reader that has seen number n has seen every change before it. Each
// call costs the same whatever the number of keys.
type ClientKeys interface {
	// AddClientKey stores k as an active key and appends e, in one
	// transaction, and returns k as stored (Seq set); ErrConflict when
	// the kid is taken.
	AddClientKey(ctx context.Context, k ClientKey, e audit.Event) (ClientKey, error)
	// RotateClientKey applies the rotation rule (Rotation: a new key
	// weaker than the one it replaces only when weaken) to the keys of
	// k.ClientID at k.CreatedAt, k the new key, and appends e, completed
	// with what the rotation did, in one transaction; ErrNotFound when the
	// client has no key, ErrConflict when the kid is taken, a
	// *clientkey.WeakerError.
	RotateClientKey(ctx context.Context, k ClientKey, weaken bool, e audit.Event) (ClientKey, error)
	// RetireClientKey applies the retirement's guard, unless force, and
	// rule (Retirement) to the key kid among its client's keys at now, and
	// appends e, in one transaction; ErrNotFound, a
	// *clientkey.LockOutError.
	RetireClientKey(ctx context.Context, kid string, force bool, now time.Time, e audit.Event) (ClientKey, error)
	// ImportClientKeys stores keys as they are (status and dates
	// included) with events[i] for keys[i], in one transaction;
	// ErrConflict when a kid is taken, and then nothing is stored.
	ImportClientKeys(ctx context.Context, keys []ClientKey, events []audit.Event) error
	// ClientKey returns the key kid, or ErrNotFound.
	ClientKey(ctx context.Context, kid string) (ClientKey, error)
	// ListClientKeys returns the keys f selects in kid order, at most
	// f.Limit, without their secrets, each with its last use.
	ListClientKeys(ctx context.Context, f ClientKeyFilter) ([]ClientKey, error)
	// ClientKeyChanges returns the kids changed after the sequence number
	// after, oldest first, at most limit, each with the number of its last
	// change, and the newest number there is. A change of a client's
	// limits (ClientLimits) is among them, naming the client instead of a
	// kid.
	ClientKeyChanges(ctx context.Context, after int64, limit int) ([]clientkey.Change, int64, error)
	// ListenClientKeys calls notify after each key change any process
	// commits, until ctx is done (nil) or the listening fails; notices
	// are lost while it is not running, so a follower also reads the
	// changes at an interval. ErrNoListen when the engine has none.
	ListenClientKeys(ctx context.Context, notify func()) error
}

// ErrNoListen: the engine cannot notify key changes; followers poll.
var ErrNoListen = errors.New("store: no notifications of key changes")

// ClientKey is a client's shared encryption key as the store keeps it:
// the key, its client's workspace ("" when the store has no such client),
// the sequence number of its last change, and its last use at any edge
// (the zero time for none reported; Fleet.ReportEdge raises it, and a
// change leaves it as it is). The secret is stored sealed (package
// sealed).
type ClientKey struct {
	clientkey.Key
	WorkspaceID string
	Seq         int64
	LastUsedAt  time.Time
}

// ClientKeyFilter selects keys for ListClientKeys: a page in kid order,
// of a client, a workspace, a status, or any of them together, each
// served by an index (schema version 16), whatever the number of keys.
type ClientKeyFilter struct {
	Kid         string           // the one key of that kid; "" for any
	ClientID    string           // "" for every client
	WorkspaceID string           // "" for every workspace
	Status      clientkey.Status // "" for every status
	After       string           // the kid the page starts after
	Limit       int
}

// Where returns the conditions f sets, each "column op ?", and their
// arguments in the same order: only those, so that the engine plans each
// combination on its index. The engines keep or number the placeholders.
func (f ClientKeyFilter) Where() (conds []string, args []any) {
	if f.Kid != "" {
		return []string{"kid = ?"}, []any{f.Kid}
	}
	conds, args = []string{"kid > ?"}, []any{f.After}
	for _, c := range []struct{ column, value string }{
		{"client_id", f.ClientID}, {"workspace_id", f.WorkspaceID}, {"status", string(f.Status)},
	} {
		if c.value != "" {
			conds, args = append(conds, c.column+" = ?"), append(args, c.value)
		}
	}
	return conds, args
}

// Rotation applies the rotation rule (clientkey.Rotate) to keys, the
// client's as its transaction holds them, for the new key k, and completes
// e, the rotation's record, with the kids it moves to retiring and what
// k gives up that weaken allowed; ErrNotFound when the client has no key.
func Rotation(keys []ClientKey, k ClientKey, weaken bool, e *audit.Event) (clientkey.Rotated, error) {
	r, err := clientkey.Rotate(Keys(keys), k.Key, weaken, k.CreatedAt)
	if errors.Is(err, clientkey.ErrNoKeys) {
		return r, ErrNotFound
	}
	if err != nil {
		return r, err
	}
	for _, c := range r.Changed {
		e.Replaced = append(e.Replaced, c.Kid)
	}
	e.Weakened = r.Lost
	return r, nil
}

// Retirement applies the retirement's guard (clientkey.CheckRetire), unless
// force, and rule (clientkey.Retire) to the key kid among keys, its
// client's as its transaction holds them, at now: the key as retired, and
// whether it changed (a retired key stays as it was); ErrNotFound when
// keys has no kid.
func Retirement(keys []ClientKey, kid string, force bool, now time.Time) (ClientKey, bool, error) {
	i := slices.IndexFunc(keys, func(k ClientKey) bool { return k.Kid == kid })
	if i < 0 {
		return ClientKey{}, false, ErrNotFound
	}
	if !force {
		if err := clientkey.CheckRetire(Keys(keys), kid); err != nil {
			return keys[i], false, err
		}
	}
	k := keys[i]
	var changed bool
	k.Key, changed = clientkey.Retire(k.Key, now)
	return k, changed, nil
}

// Keys returns the keys of rows.
func Keys(rows []ClientKey) []clientkey.Key {
	keys := make([]clientkey.Key, len(rows))
	for i := range rows {
		keys[i] = rows[i].Key
	}
	return keys
}
