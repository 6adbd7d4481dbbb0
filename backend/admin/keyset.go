package admin

import (
	"strconv"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/problem"
)

// The lists the store pages in creation order (clients, sharing grants,
// subscriptions) share a cursor: the position of the last item of the page
// before, its creation time and id (clientCursor's JSON).

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
func keysetPage[T any](items []T, limit int, pos func(T) store.Cursor) Page[T] {
	p := Page[T]{Items: items}
	if limit > 0 && len(items) == limit {
		last := pos(items[len(items)-1])
		p.Next = encodeCursor(clientCursor{CreatedAt: last.CreatedAt, ID: last.ID})
	}
	return p
}

// sizeOf is a page size, the default when none.
func sizeOf(limit int) int {
	return PageQuery{Limit: limit}.size()
}

// checkLimit refuses a page size a caller of the service (the command
// line's direct mode) gives out of bounds: 0 is the default.
func checkLimit(limit int) error {
	if limit < 0 || limit > MaxLimit {
		return errLimit
	}
	return nil
}

// errLimit answers a page size out of bounds.
var errLimit = problem.New(400, problem.CodeInvalidRequest, "limit must be a whole number from 1 to "+strconv.Itoa(MaxLimit))
