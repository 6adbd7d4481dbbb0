package trail

import (
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Page sizes of a search: the default, and the most a caller may ask.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Query selects records of the trails, for Search and Export.
type Query struct {
	// Workspace, when Scoped, is the one trail read ("" the
	// installation's); without Scoped every trail is read.
	Workspace string
	Scoped    bool
	// Agent is who acted: a client id, or a person's name.
	Agent string
	// Entity is the id of what the records concern (a care context,
	// subscription, client, grant, kid, workspace or serial).
	Entity string
	// Action is the records' action, "" for any.
	Action audit.Action
	// Since and Until bound the records' times, Since <= at < Until; zero
	// for no bound.
	Since, Until time.Time
	// Newest reads every trail's records together, newest first (by
	// time, then workspace, then seq); without it the trails are read one
	// after the other in workspace order, each oldest first.
	Newest bool
	// Cursor is where the page starts: the Next of the page before, ""
	// for the first.
	Cursor string
	// Limit is a search's page size (0: DefaultLimit), or the most records
	// an export writes (0: every one); at most MaxLimit either way.
	Limit int
}

// The parameters of a query, in its Values' order.
var params = []string{"workspace", "agent", "entity", "action", "since", "until", "order", "cursor", "limit"}

// The orders of a search (the parameter order): OrderOldest, the
// default, reads the trails in workspace order, each oldest first;
// OrderNewest every trail's records together, newest first.
const (
	OrderOldest = "oldest"
	OrderNewest = "newest"
)

// invalid is the error of a query a caller must correct.
func invalid(detail string) error { return problem.New(400, problem.CodeInvalidRequest, detail) }

// errLimit refuses a limit out of its range, in the words of every list
// of the Admin API.
var errLimit = invalid("limit must be a whole number from 1 to " + strconv.Itoa(MaxLimit))

// ParseQuery reads a search's or an export's Query from the query of GET
// /admin/v1/audit-events or /admin/v1/audit-events/export: workspace
// (absent for every trail, empty for the installation's), agent, entity,
// action, since and until (ParseTime), order (OrderOldest, OrderNewest),
// cursor, limit (1 to MaxLimit: a search's page size, or the most records
// an export writes, every one when absent). Any other parameter, or one
// given twice, is refused.
func ParseQuery(v url.Values) (Query, error) { return parse(v) }

// parse reads the parameters of v into a Query, each at most once.
func parse(v url.Values) (Query, error) {
	var q Query
	for name, vs := range v {
		if !slices.Contains(params, name) {
			return q, invalid("unknown parameter " + quote(name) + ": the parameters are workspace, agent, entity, action, since, until, order, cursor and limit")
		}
		if len(vs) != 1 {
			return q, invalid("the parameter " + quote(name) + " may be given only once")
		}
	}
	q = Query{Workspace: v.Get("workspace"), Scoped: v.Has("workspace"), Agent: v.Get("agent"), Entity: v.Get("entity"),
		Action: audit.Action(v.Get("action")), Cursor: v.Get("cursor")}
	switch v.Get("order") {
	case "", OrderOldest:
	case OrderNewest:
		q.Newest = true
	default:
		return q, invalid("order must be oldest or newest")
	}
	var err error
	if q.Since, err = ParseTime(v.Get("since"), false); err != nil {
		return q, invalid("since: " + err.Error())
	}
	if q.Until, err = ParseTime(v.Get("until"), true); err != nil {
		return q, invalid("until: " + err.Error())
	}
	if s := v.Get("limit"); v.Has("limit") {
		if q.Limit, err = strconv.Atoi(s); err != nil || q.Limit < 1 || q.Limit > MaxLimit || strconv.Itoa(q.Limit) != s {
			return q, errLimit
		}
	}
	return q, q.Validate()
}

// Validate reports whether q may be searched or exported: ids of their
// syntax, a known action, a limit from 0 to MaxLimit. Its errors are
// problems (400) that quote no value.
func (q Query) Validate() error {
	switch {
	case q.Workspace != "" && (!q.Scoped || !contract.ValidID(q.Workspace)):
		return invalid("workspace is not a workspace id")
	case q.Agent != "" && !contract.IsUUID(q.Agent) && !contract.ValidPersonName(q.Agent):
		return invalid("agent must be a client id (a UUID) or a person's name (alice@example.org)")
	case q.Entity != "" && !clientkey.ValidKid(q.Entity):
		return invalid("entity must be an id: a care context, subscription, client, grant, key, workspace or certificate serial")
	case q.Action != "" && !q.Action.Valid():
		return invalid("action is not an action of the audit trail")
	case q.Limit < 0 || q.Limit > MaxLimit:
		return errLimit
	case !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until):
		return invalid("since must be before until")
	}
	return nil
}

// Values returns q as query parameters, ParseQuery's inverse: the times
// as RFC 3339 in UTC.
func (q Query) Values() url.Values {
	v := url.Values{}
	set := func(name, value string) {
		if value != "" {
			v.Set(name, value)
		}
	}
	if q.Scoped {
		v.Set("workspace", q.Workspace)
	}
	set("agent", q.Agent)
	set("entity", q.Entity)
	set("action", string(q.Action))
	set("since", timeValue(q.Since))
	set("until", timeValue(q.Until))
	if q.Newest {
		v.Set("order", OrderNewest)
	}
	set("cursor", q.Cursor)
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

func timeValue(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// errTime is ParseTime's refusal.
type errTime string

func (e errTime) Error() string { return string(e) }

// ParseTime reads a bound of the records' times: an RFC 3339 time, or a
// date (2006-01-02) in UTC, which as an upper bound (end) means up to the
// end of that day. "" is no bound, the zero time.
func ParseTime(s string, end bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if t, err = time.Parse(time.DateOnly, s); err == nil && end {
			t = t.AddDate(0, 0, 1)
		}
	}
	if y := t.UTC().Year(); err != nil || y < 1 || y > 9999 {
		return time.Time{}, errTime("want a date (2006-01-02) or an RFC 3339 time, within years 1 to 9999")
	}
	return t, nil
}

// quote quotes a name the caller sent, cut short.
func quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strconv.Quote(s)
}
