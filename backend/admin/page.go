package admin

import (
	"encoding/base64"
	"encoding/json"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/internal/problem"
)

// errCursor answers a cursor this server did not give.
var errCursor = problem.New(400, problem.CodeInvalidRequest, "cursor is not a cursor this server gave: pass the next member of a page as it is")

// encodeCursor returns the opaque cursor of position v: its JSON in
// base64url, which a caller passes back as it is.
func encodeCursor(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("admin: a cursor's position does not encode: " + err.Error()) // strings, integers and times only
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor reads the position of cursor into v; an empty cursor is the
// first page and leaves v as it is.
func decodeCursor(cursor string, v any) error {
	if cursor == "" {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) > 1024 || json.Unmarshal(b, v) != nil {
		return errCursor
	}
	return nil
}

// pageOf returns the page q asks of items, a whole list held in memory in
// the order of key (the deny-list, the fleet: short lists), the cursor
// being the key of the last item of the page before.
func pageOf[T any](items []T, key func(T) string, q adminapi.PageQuery) (adminapi.Page[T], error) {
	var after string
	if err := q.Check(); err != nil {
		return adminapi.Page[T]{}, err
	}
	if err := decodeCursor(q.Cursor, &after); err != nil {
		return adminapi.Page[T]{}, err
	}
	p := adminapi.Page[T]{Items: []T{}}
	for _, it := range items {
		if after != "" && key(it) <= after {
			continue
		}
		if len(p.Items) == q.Size() {
			p.Next = encodeCursor(key(p.Items[len(p.Items)-1]))
			break
		}
		p.Items = append(p.Items, it)
	}
	return p, nil
}

// mapped returns items mapped by out, one by one: the domain's types as
// the API shows them.
func mapped[D, W any](items []D, out func(D) W) []W {
	w := make([]W, 0, len(items))
	for _, it := range items {
		w = append(w, out(it))
	}
	return w
}
