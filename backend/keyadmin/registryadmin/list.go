package registryadmin

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// errWorkspace answers a list of a workspace's keys: the file names
// clients, not their workspaces.
var errWorkspace = problem.New(http.StatusBadRequest, problem.CodeInvalidRequest,
	"a registry file knows no workspaces: list a client's keys")

// ListKeys returns a page of the file's keys q selects (of a client, of a
// status), in kid order, without their secrets, which it does not open:
// listing needs no keeper. A file knows no key's workspace or last use.
// The cursor is the last kid of the page before.
func (s *Service) ListKeys(_ context.Context, q adminapi.KeyQuery) (adminapi.Page[adminapi.KeyInfo], error) {
	if err := q.Check(); err != nil {
		return adminapi.Page[adminapi.KeyInfo]{}, err
	}
	if q.Workspace != "" {
		return adminapi.Page[adminapi.KeyInfo]{}, errWorkspace
	}
	keys, err := s.list()
	if err != nil {
		return adminapi.Page[adminapi.KeyInfo]{}, err
	}
	p := adminapi.Page[adminapi.KeyInfo]{Items: []adminapi.KeyInfo{}}
	size := adminapi.PageQuery{Limit: q.Limit}.Size()
	for _, k := range keys {
		if q.Cursor != "" && k.Kid <= q.Cursor || q.Client != "" && k.ClientID != q.Client || q.Status != "" && k.Status != q.Status {
			continue
		}
		if len(p.Items) == size {
			p.Next = p.Items[size-1].Kid
			break
		}
		p.Items = append(p.Items, adminapi.KeyInfo{Listed: k})
	}
	return p, nil
}

// GetKey returns the file's key kid, without its secret.
func (s *Service) GetKey(_ context.Context, kid string) (adminapi.KeyInfo, error) {
	keys, err := s.list()
	if err != nil {
		return adminapi.KeyInfo{}, err
	}
	for _, k := range keys {
		if k.Kid == kid {
			return adminapi.KeyInfo{Listed: k}, nil
		}
	}
	return adminapi.KeyInfo{}, keyadmin.Problem(keyadmin.ErrNoKey, "", kid)
}

// list returns the file's keys without their secrets, in kid order.
func (s *Service) list() ([]clientkey.Listed, error) {
	keys, err := registryfile.List(s.path)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(keys, func(a, b clientkey.Listed) int { return strings.Compare(a.Kid, b.Kid) })
	return keys, nil
}
