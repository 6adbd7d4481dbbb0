package adminapi

import (
	"context"
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

// errLimit answers a page size out of bounds.
var errLimit = invalid("limit must be a whole number from 1 to " + strconv.Itoa(MaxLimit))

// invalid is the problem of a query a caller must correct: 400
// invalid_request, saying detail.
func invalid(detail string) *problem.Problem {
	return problem.New(400, problem.CodeInvalidRequest, detail)
}

// All returns every item of a list, calling list with each page's cursor
// in turn from the first: for the command line and the console, which
// show a whole list. An empty list is empty, not nil.
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
			return out, errors.New("adminapi: a page's next cursor is its own")
		}
		cursor = p.Next
	}
}

// PageQuery is where a page of an unfiltered list starts, and its size (0:
// DefaultLimit).
type PageQuery struct {
	Cursor string
	Limit  int
}

// ParsePageQuery reads a PageQuery: cursor, limit.
func ParsePageQuery(q url.Values) (PageQuery, error) {
	v, err := params(q, "cursor", "limit")
	if err != nil {
		return PageQuery{}, err
	}
	pq := PageQuery{Cursor: v["cursor"]}
	pq.Limit, err = limitOf(v["limit"])
	return pq, err
}

// Values returns q as query parameters, ParsePageQuery's inverse.
func (q PageQuery) Values() url.Values {
	return values("cursor", q.Cursor, "limit", limitValue(q.Limit))
}

// Check refuses a page size out of bounds (0 is the default).
func (q PageQuery) Check() error { return checkLimit(q.Limit) }

// Size is the page size q asks, the default when none.
func (q PageQuery) Size() int {
	if q.Limit <= 0 {
		return DefaultLimit
	}
	return q.Limit
}

// CheckParams refuses a query that names a parameter other than known, or
// one twice, with a problem (400) that names it.
func CheckParams(q url.Values, known ...string) error {
	_, err := params(q, known...)
	return err
}

// params reads the query parameters of a list: each at most once, and
// none but known. It returns the value of each known one ("" when absent).
func params(q url.Values, known ...string) (map[string]string, error) {
	out := make(map[string]string, len(known))
	for name, vs := range q {
		if !slices.Contains(known, name) {
			return nil, invalid("unknown parameter " + quote(name))
		}
		if len(vs) != 1 {
			return nil, invalid("the parameter " + quote(name) + " may be given only once")
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

// checkLimit refuses a page size a caller of the service (the command
// line's direct mode) gives out of bounds: 0 is the default.
func checkLimit(limit int) error {
	if limit < 0 || limit > MaxLimit {
		return errLimit
	}
	return nil
}

// values returns the pairs name, value whose value is not empty as query
// parameters: the inverse of a query's parsing.
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
