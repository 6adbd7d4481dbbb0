package admin

import (
	"context"
	"net/http"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
)

// keyOut is k as the API shows it.
func keyOut(k store.ClientKey) adminapi.KeyInfo {
	return adminapi.KeyInfo{Listed: k.Listed(), WorkspaceID: k.WorkspaceID, LastUsedAt: clientkey.TimeOrNil(k.LastUsedAt)}
}

// ListKeys returns a page of the keys q selects, in kid order, each with
// its last use at any edge; the cursor is the last kid of the page before,
// and the store reads the page from an index (keyset pagination).
func (s *Service) ListKeys(ctx context.Context, q adminapi.KeyQuery) (adminapi.Page[adminapi.KeyInfo], error) {
	var after string
	if err := q.Check(); err != nil {
		return adminapi.Page[adminapi.KeyInfo]{}, err
	}
	if err := decodeCursor(q.Cursor, &after); err != nil {
		return adminapi.Page[adminapi.KeyInfo]{}, err
	}
	size := sizeOf(q.Limit)
	list, err := s.keys.Page(ctx, store.ClientKeyFilter{ClientID: q.Client, WorkspaceID: q.Workspace, Status: q.Status,
		After: after, Limit: size})
	if err != nil {
		return adminapi.Page[adminapi.KeyInfo]{}, err
	}
	p := adminapi.Page[adminapi.KeyInfo]{Items: mapped(list, keyOut)}
	if len(list) == size {
		p.Next = encodeCursor(list[len(list)-1].Kid)
	}
	return p, nil
}

// GetKey returns the key kid, without its secret, with its last use.
func (s *Service) GetKey(ctx context.Context, kid string) (adminapi.KeyInfo, error) {
	k, err := s.keys.Get(ctx, kid)
	if err != nil {
		return adminapi.KeyInfo{}, keyadmin.Problem(err, "", kid)
	}
	return keyOut(k), nil
}

func (h *Handler) listKeys(w http.ResponseWriter, r *http.Request) error {
	return listedBy(w, r, adminapi.ParseKeyQuery, h.svc.ListKeys)
}

func (h *Handler) getKey(w http.ResponseWriter, r *http.Request) error {
	return byPath(w, r, "kid", clientkey.ValidKid, h.svc.GetKey)
}
