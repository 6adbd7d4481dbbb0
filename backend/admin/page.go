package admin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strconv"

	"github.com/health-data-connect/hdc/internal/problem"
)

// Page is one page of a list: its items, and the cursor of the next page,
// empty on the last.
type Page[T any] struct {
	Items []T    `json:"items"`
	Next  string `json:"next,omitempty"`
}

// Page sizes: the default, and the most a caller may ask.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
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

// limitOf reads a page size: empty is DefaultLimit; 1 to MaxLimit.
func limitOf(s string) (int, error) {
	if s == "" {
		return DefaultLimit, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxLimit || strconv.Itoa(n) != s {
		return 0, errLimit
	}
	return n, nil
}

// query reads the query parameters of a list: each at most once, and
// none but known. It returns the value of each known one ("" when absent).
func query(q url.Values, known ...string) (map[string]string, error) {
	out := make(map[string]string, len(known))
	for name, vs := range q {
		if !slices.Contains(known, name) {
			return nil, problem.New(400, problem.CodeInvalidRequest, "unknown parameter "+quote(name))
		}
		if len(vs) != 1 {
			return nil, problem.New(400, problem.CodeInvalidRequest, "the parameter "+quote(name)+" may be given only once")
		}
		out[name] = vs[0]
	}
	return out, nil
}

// quote quotes a name the caller sent, cut short.
func quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strconv.Quote(s)
}

// All returns every item of a list, calling list with each page's cursor
// in turn from the first: for the command line, which prints a whole list
// whether it reads the database or the API. An empty list is empty, not
// nil.
func All[T any](ctx context.Context, list func(ctx context.Context, cursor string) (Page[T], error)) ([]T, error) {
	out := []T{}
	for cursor := ""; ; {
		p, err := list(ctx, cursor)
		if err != nil {
			return out, err
		}
		out = append(out, p.Items...)
		if p.Next == "" {
			return out, nil
		}
		if p.Next == cursor {
			return out, errors.New("admin: a page's next cursor is its own")
		}
		cursor = p.Next
	}
}

// values returns the pairs name, value whose value is not empty as query
// parameters: the inverse of a query's parsing, for a client of the API.
func values(pairs ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			q.Set(pairs[i], pairs[i+1])
		}
	}
	return q
}

// limitValue is the parameter of a page size, "" for the default.
func limitValue(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// PageQuery is where a page of an unfiltered list starts, and its size.
type PageQuery struct {
	Cursor string
	Limit  int
}

// ParsePageQuery reads a PageQuery: cursor, limit.
func ParsePageQuery(q url.Values) (PageQuery, error) {
	v, err := query(q, "cursor", "limit")
	if err != nil {
		return PageQuery{}, err
	}
	pq := PageQuery{Cursor: v["cursor"]}
	pq.Limit, err = limitOf(v["limit"])
	return pq, err
}

// Values returns q as query parameters.
func (q PageQuery) Values() url.Values {
	return values("cursor", q.Cursor, "limit", limitValue(q.Limit))
}

// size is the page size q asks, the default when none.
func (q PageQuery) size() int {
	if q.Limit <= 0 {
		return DefaultLimit
	}
	return q.Limit
}

// pageOf returns the page q asks of items, a whole list held in memory in
// the order of key (the deny-list, the fleet: short lists), the cursor
// being the key of the last item of the page before.
func pageOf[T any](items []T, key func(T) string, q PageQuery) (Page[T], error) {
	var after string
	if err := decodeCursor(q.Cursor, &after); err != nil {
		return Page[T]{}, err
	}
	p := Page[T]{Items: []T{}}
	for _, it := range items {
		if after != "" && key(it) <= after {
			continue
		}
		if len(p.Items) == q.size() {
			p.Next = encodeCursor(key(p.Items[len(p.Items)-1]))
			break
		}
		p.Items = append(p.Items, it)
	}
	return p, nil
}
