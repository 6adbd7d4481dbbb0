package search

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// Page sizes of the AuditEvent search (_count).
const (
	DefaultCount = 50
	MaxCount     = 200
)

// CursorParam carries the position of a page (the last seq of the
// previous one) in a next link. Clients treat it as opaque.
const CursorParam = "_cursor"

// Params is a parsed AuditEvent search.
type Params struct {
	// Filter selects the records (without its Workspace, which is the
	// caller's, and with Limit the page size).
	Filter store.AuditFilter
	// Query is the search's parameters, without the cursor: the self and
	// next links are built from it.
	Query url.Values
}

// dateValue matches the date and dateTime values of FHIR search: a year,
// year-month, date, or a date and time to the minute or the second, with
// an optional fraction of a second, and a zone.
var dateValue = regexp.MustCompile(`^([0-9]{4})(-(0[1-9]|1[0-2])(-(0[1-9]|[12][0-9]|3[01])` +
	`(T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.([0-9]{1,9}))?)?(Z|[+-](0[0-9]|1[0-4]):[0-5][0-9]))?)?)?$`)

// Parse parses the query of GET /health/api/v1/fhir/AuditEvent:
//
//   - date, repeatable: a date or dateTime with a prefix ge, gt, le, lt or
//     eq (the default). A value stands for the range its precision covers
//     (a day, a second...), so le 2026-11-22 is up to the end of that day
//     and eq 2026-11-22 that whole day. The bounds of every date
//     parameter must all hold.
//   - entity, once: the care context (or subscription) id the records
//     concern;
//   - agent, once: who acted: a client id, or the name of a person (an
//     operator's change, a read of the trail);
//   - _count, once: the page size, 1 to MaxCount (DefaultCount
//     when absent);
//   - _cursor, once: the position a next link carries.
//
// Any other parameter, an empty or repeated one, or an invalid value is
// refused with an error saying which, and fit to show to the client.
func Parse(q url.Values) (Params, error) {
	s := Params{Filter: store.AuditFilter{Limit: DefaultCount}, Query: url.Values{}}
	for name, vs := range q {
		for _, v := range vs {
			if v == "" {
				return Params{}, fmt.Errorf("the parameter %s is empty", quoteParam(name))
			}
		}
		if name != "date" && len(vs) > 1 {
			return Params{}, fmt.Errorf("the parameter %s may be given only once", quoteParam(name))
		}
		if err := s.set(name, vs); err != nil {
			return Params{}, err
		}
		if name != CursorParam { // the cursor is not part of the search's own query
			s.Query[name] = vs
		}
	}
	return s, nil
}

// set reads the values vs of the search parameter name into s.
func (s *Params) set(name string, vs []string) error {
	switch name {
	case "date":
		for _, v := range vs {
			if err := s.date(v); err != nil {
				return err
			}
		}
	case "entity":
		if !contract.IsUUID(vs[0]) {
			return errors.New("entity must be a care_context_id (a UUID)")
		}
		s.Filter.Entity = vs[0]
	case "agent":
		if !contract.IsUUID(vs[0]) && !contract.ValidPersonName(vs[0]) {
			return errors.New("agent must be a client id (a UUID) or a person's name (alice@example.org)")
		}
		s.Filter.Agent = vs[0]
	case "_count":
		n, err := strconv.Atoi(vs[0])
		if err != nil || n < 1 || n > MaxCount {
			return fmt.Errorf("_count must be a whole number from 1 to %d", MaxCount)
		}
		s.Filter.Limit = n
	case CursorParam:
		n, err := strconv.ParseInt(vs[0], 10, 64)
		if err != nil || n < 1 || strconv.FormatInt(n, 10) != vs[0] {
			return errors.New(CursorParam + " is not a cursor this server gave: follow the next link as it is")
		}
		s.Filter.After = n
	default:
		return fmt.Errorf("unknown search parameter %s: the parameters are date, entity, agent, _count and %s",
			quoteParam(name), CursorParam)
	}
	return nil
}

// quoteParam quotes a parameter name for an error, cut short: it comes
// from the client.
func quoteParam(name string) string {
	if len(name) > 40 {
		name = name[:40] + "…"
	}
	return strconv.Quote(name)
}

// date applies one date parameter's bound.
func (s *Params) date(v string) error {
	// A + of a zone that was not percent-encoded arrives as a space.
	v = strings.ReplaceAll(v, " ", "+")
	prefix := "eq"
	if len(v) >= 2 && v[0] >= 'a' && v[0] <= 'z' {
		prefix, v = v[:2], v[2:]
	}
	start, end, err := dateRange(v)
	if err != nil {
		return err
	}
	f := &s.Filter
	since := func(t time.Time) {
		if f.Since.IsZero() || t.After(f.Since) {
			f.Since = t
		}
	}
	until := func(t time.Time) {
		if f.Until.IsZero() || t.Before(f.Until) {
			f.Until = t
		}
	}
	switch prefix {
	case "eq":
		since(start)
		until(end)
	case "ge":
		since(start)
	case "gt":
		since(end)
	case "le":
		until(end)
	case "lt":
		until(start)
	default:
		return errors.New("a date's prefix must be eq, ge, gt, le or lt")
	}
	return nil
}

// dateRange returns the range [start, end) that a FHIR date or dateTime
// value stands for: its precision's whole year, month, day, minute, second
// or fraction. A date without a zone is taken in UTC.
func dateRange(v string) (start, end time.Time, err error) {
	m := dateValue.FindStringSubmatch(v)
	if m == nil {
		return start, end, errors.New("a date must be YYYY, YYYY-MM, YYYY-MM-DD or a dateTime " +
			"YYYY-MM-DDThh:mm[:ss[.fraction]] with a zone (Z or ±hh:mm), after an optional prefix ge, gt, le, lt or eq")
	}
	switch {
	case m[2] == "":
		start, err = time.Parse("2006", v)
		end = start.AddDate(1, 0, 0)
	case m[4] == "":
		start, err = time.Parse("2006-01", v)
		end = start.AddDate(0, 1, 0)
	case m[6] == "":
		start, err = time.Parse("2006-01-02", v)
		end = start.AddDate(0, 0, 1)
	case m[8] == "":
		start, err = time.Parse("2006-01-02T15:04Z07:00", v)
		end = start.Add(time.Minute)
	default:
		start, err = time.Parse(time.RFC3339Nano, v)
		step := time.Second
		for range len(m[10]) {
			step /= 10
		}
		end = start.Add(step)
	}
	if err != nil { // a day the month does not have
		return start, end, errors.New("a date names a day that does not exist")
	}
	return start.UTC(), end.UTC(), nil
}

// Links returns the self and next links of a page of s that ended
// with the record last (0 for none); next is empty unless more is set.
func (s Params) Links(last int64, more bool) (self, next string) {
	q := url.Values{}
	for k, v := range s.Query {
		q[k] = v
	}
	if s.Filter.After > 0 {
		q.Set(CursorParam, strconv.FormatInt(s.Filter.After, 10))
	}
	self = withQuery(contract.PathAuditEvents, q)
	if more {
		q.Set(CursorParam, strconv.FormatInt(last, 10))
		next = withQuery(contract.PathAuditEvents, q)
	}
	return self, next
}

func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + strings.ReplaceAll(q.Encode(), "+", "%20")
}
