package keyadmin

import (
	"context"
	"errors"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
)

// Import stores keys as they are (kid, secret, kind, status and dates),
// each with a key_add record in its client's workspace's trail (the
// installation's when the store has no such client), all in one
// transaction: a kid the store has fails the import with ErrKidTaken, and
// nothing is stored. It returns how many keys it stored. by is the
// operator the records name.
func (s *Service) Import(ctx context.Context, by audit.Person, keys []clientkey.Key) (int, error) {
	if by == (audit.Person{}) {
		return 0, audit.ErrNoPerson
	}
	now := s.now()
	workspaces := map[string]string{}
	rows, events := make([]store.ClientKey, 0, len(keys)), make([]audit.Event, 0, len(keys))
	for _, k := range keys {
		ws, ok := workspaces[k.ClientID]
		if !ok {
			var err error
			if ws, err = s.workspace(ctx, k.ClientID); err != nil && !errors.Is(err, ErrNoClient) {
				return 0, err
			}
			workspaces[k.ClientID] = ws
		}
		k.Enc = k.ContentEncryption()
		rows = append(rows, store.ClientKey{Key: k, WorkspaceID: ws})
		events = append(events, event(audit.KeyAdd, by, ws, k.ClientID, k.Kid, now))
	}
	if err := s.st.ImportClientKeys(ctx, rows, events); err != nil {
		return 0, taken(err)
	}
	return len(rows), nil
}

// Ensure adds the key kid of client, with secret, unless a key has that
// kid, whatever its status: hdc up's demo key, added on the first run by
// by, whom the record names.
func (s *Service) Ensure(ctx context.Context, by audit.Person, client, kid, secret string) error {
	found, err := s.st.ListClientKeys(ctx, store.ClientKeyFilter{Kid: kid, Limit: 1})
	if err != nil || len(found) > 0 {
		return err
	}
	_, err = s.Add(ctx, AddRequest{By: by, Client: client, Kid: kid, Secret: secret})
	return err
}
