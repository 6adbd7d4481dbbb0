package admin

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Key is a client's shared encryption key as the API lists it, never with
// its secret: its kid and client, its kind (enc, and whether its
// envelopes must name iat and jti), status and dates, its client's
// workspace, and its last use at any edge.
type Key struct {
	clientkey.Listed
	WorkspaceID string `json:"workspace_id"`
	// LastUsedAt is the latest use of the key at any edge, as the edges
	// report it over the hop (every few seconds); absent when no edge has
	// reported a use.
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
}

// keyOut is k as the API shows it.
func keyOut(k store.ClientKey) Key {
	return Key{Listed: k.Listed(), WorkspaceID: k.WorkspaceID, LastUsedAt: clientkey.TimeOrNil(k.LastUsedAt)}
}

// KeyQuery selects keys: of a client, of a workspace, of a status, a page
// at a time in kid order.
type KeyQuery struct {
	Client    string
	Workspace string
	Status    clientkey.Status
	Cursor    string
	Limit     int
}

// ParseKeyQuery reads a KeyQuery from the query of GET /admin/v1/keys:
// client, workspace, status (active, retiring, retired), cursor, limit.
func ParseKeyQuery(q url.Values) (KeyQuery, error) {
	v, err := query(q, "client", "workspace", "status", "cursor", "limit")
	if err != nil {
		return KeyQuery{}, err
	}
	kq := KeyQuery{Client: v["client"], Workspace: v["workspace"], Status: clientkey.Status(v["status"]), Cursor: v["cursor"]}
	switch {
	case kq.Client != "" && !clientkey.ValidClientID(kq.Client):
		return kq, problem.New(400, problem.CodeInvalidRequest, "client must be 1 to 256 bytes of UTF-8")
	case kq.Workspace != "" && !contract.ValidID(kq.Workspace):
		return kq, problem.New(400, problem.CodeInvalidRequest, "workspace is not a workspace id")
	case kq.Status != "" && !kq.Status.Valid():
		return kq, problem.New(400, problem.CodeInvalidRequest, "status must be active, retiring or retired")
	}
	kq.Limit, err = limitOf(v["limit"])
	return kq, err
}

// Values returns q as query parameters, ParseKeyQuery's inverse.
func (q KeyQuery) Values() url.Values {
	return values("client", q.Client, "workspace", q.Workspace, "status", string(q.Status), "cursor", q.Cursor, "limit", limitValue(q.Limit))
}

// ListKeys returns a page of the keys q selects, in kid order, each with
// its last use at any edge; the cursor is the last kid of the page before,
// and the store reads the page from an index (keyset pagination).
func (s *Service) ListKeys(ctx context.Context, q KeyQuery) (Page[Key], error) {
	var after string
	if err := decodeCursor(q.Cursor, &after); err != nil {
		return Page[Key]{}, err
	}
	size := PageQuery{Limit: q.Limit}.size()
	list, err := s.keys.Page(ctx, store.ClientKeyFilter{ClientID: q.Client, WorkspaceID: q.Workspace, Status: q.Status,
		After: after, Limit: size})
	if err != nil {
		return Page[Key]{}, err
	}
	p := Page[Key]{Items: make([]Key, 0, len(list))}
	for _, k := range list {
		p.Items = append(p.Items, keyOut(k))
	}
	if len(list) == size {
		p.Next = encodeCursor(list[len(list)-1].Kid)
	}
	return p, nil
}

// GetKey returns the key kid, without its secret, with its last use.
func (s *Service) GetKey(ctx context.Context, kid string) (Key, error) {
	k, err := s.keys.Get(ctx, kid)
	if err != nil {
		return Key{}, KeyProblem(err, "", kid)
	}
	return keyOut(k), nil
}

func (h *Handler) listKeys(w http.ResponseWriter, r *http.Request) error {
	return listedBy(w, r, ParseKeyQuery, h.svc.ListKeys)
}

func (h *Handler) getKey(w http.ResponseWriter, r *http.Request) error {
	return byPath(w, r, "kid", clientkey.ValidKid, h.svc.GetKey)
}
