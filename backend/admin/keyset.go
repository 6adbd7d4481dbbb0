package admin

import (
	"time"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/store"
)

// The lists the store pages in creation order (clients, sharing grants,
// subscriptions) share a cursor: the position of the last item of the page
// before, its creation time and id (clientCursor's JSON).

// clientCursor is the position a page of such a list ends at; Name is
// the folded name of the last client of a page of clients in name order
// (a search by a name's prefix).
type clientCursor struct {
	CreatedAt time.Time `json:"t"`
	Name      string    `json:"n,omitempty"`
	ID        string    `json:"id"`
}

// afterCursor reads the position a cursor names; the empty cursor is the
// first page's, the zero position.
func afterCursor(cursor string) (store.Cursor, error) {
	var c clientCursor
	if err := decodeCursor(cursor, &c); err != nil {
		return store.Cursor{}, err
	}
	return store.Cursor{CreatedAt: c.CreatedAt, ID: c.ID}, nil
}

// keysetPage returns items, a page of at most limit in creation order, with
// the cursor of the next page when it is full.
func keysetPage[T any](items []T, limit int, pos func(T) store.Cursor) adminapi.Page[T] {
	p := adminapi.Page[T]{Items: items}
	if limit > 0 && len(items) == limit {
		p.Next = nextCursor(pos(items[len(items)-1]))
	}
	return p
}

// nextCursor is the cursor of the page that follows the position c.
func nextCursor(c store.Cursor) string {
	return encodeCursor(clientCursor{CreatedAt: c.CreatedAt, ID: c.ID})
}

// sizeOf is a page size, the default when none.
func sizeOf(limit int) int {
	return adminapi.PageQuery{Limit: limit}.Size()
}
