package keyadmin

import (
	"context"

	"github.com/health-data-connect/hdc/backend/store"
)

// Page returns the keys f selects (of a client, a workspace, a status), a
// page in kid order, without their secrets, each with its last use at any
// edge: the store reads each page from an index, whatever the number of
// keys.
func (s *Service) Page(ctx context.Context, f store.ClientKeyFilter) ([]store.ClientKey, error) {
	return s.st.ListClientKeys(ctx, f)
}

// Get returns the key kid without its secret, with its last use; ErrNoKey
// when there is none.
func (s *Service) Get(ctx context.Context, kid string) (store.ClientKey, error) {
	found, err := s.st.ListClientKeys(ctx, store.ClientKeyFilter{Kid: kid, Limit: 1})
	if err != nil {
		return store.ClientKey{}, err
	}
	if len(found) == 0 {
		return store.ClientKey{}, ErrNoKey
	}
	return found[0], nil
}
