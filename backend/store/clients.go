package store

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/contract"
)

// ErrTooManyLabels: a change would leave a client more than
// contract.MaxLabels labels.
var ErrTooManyLabels = errors.New("store: a client has at most " + strconv.Itoa(contract.MaxLabels) + " labels")

// ClientUpdate is a change of a client's name and labels.
type ClientUpdate struct {
	// Name, when not nil, is the client's new name ("" removes it).
	Name *string
	// SetLabels are labels to add or change.
	SetLabels map[string]string
	// RemoveLabels are the keys of labels to remove; a key the client
	// has no label of is left alone.
	RemoveLabels []string
}

// Apply returns c as u changes it, and the changes it made, by field
// (the name first, then the labels by key), nil when it changes nothing;
// ErrTooManyLabels when c would have more than contract.MaxLabels. Both
// engines decide an update with it, in the update's transaction.
func (u ClientUpdate) Apply(c Client) (Client, []audit.Change, error) {
	var changes []audit.Change
	if u.Name != nil && *u.Name != c.Name {
		changes = append(changes, audit.Change{Field: audit.ChangeName, Before: c.Name, After: *u.Name})
		c.Name = *u.Name
	}
	labels := maps.Clone(c.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	for _, k := range u.RemoveLabels {
		delete(labels, k)
	}
	maps.Copy(labels, u.SetLabels)
	if len(labels) > contract.MaxLabels {
		return c, nil, ErrTooManyLabels
	}
	for _, k := range slices.Sorted(maps.Keys(mergedKeys(c.Labels, labels))) {
		if before, after := c.Labels[k], labels[k]; before != after {
			changes = append(changes, audit.Change{Field: audit.ChangeLabel + k, Before: before, After: after})
		}
	}
	c.Labels = labels
	if len(labels) == 0 {
		c.Labels = nil
	}
	return c, changes, nil
}

// mergedKeys returns the keys of a and b.
func mergedKeys(a, b map[string]string) map[string]bool {
	keys := make(map[string]bool, len(a)+len(b))
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

// LabelsJSON is a client's labels as the engines keep them beside the
// client (the table client_labels indexes them for searches); "{}" for
// none.
func LabelsJSON(labels map[string]string) string {
	if len(labels) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(labels) // a map of strings: never fails
	return string(b)
}

// ParseLabelsJSON reads what LabelsJSON stored; nil for none.
func ParseLabelsJSON(s string) (map[string]string, error) {
	var labels map[string]string
	if err := json.Unmarshal([]byte(s), &labels); err != nil {
		return nil, err
	}
	if len(labels) == 0 {
		return nil, nil
	}
	return labels, nil
}

// NameRange returns the bounds of the folded names that start with
// prefix's fold: from ≤ name < to, in the order of their bytes (UTF-8's
// order is the characters' order). to is the fold with its last
// character moved to the next one; "" when there is none (every name
// from on).
func NameRange(prefix string) (from, to string) {
	from = contract.FoldName(prefix)
	rs := []rune(from)
	for len(rs) > 0 {
		last := rs[len(rs)-1]
		switch {
		case last == utf8.MaxRune:
			rs = rs[:len(rs)-1]
			continue
		case last == 0xD7FF: // the surrogates are not characters
			rs[len(rs)-1] = 0xE000
		default:
			rs[len(rs)-1] = last + 1
		}
		return from, string(rs)
	}
	return from, ""
}

// Dialect is what the engines' SQL differs in, for the statements the
// store builds for them (ListClients).
type Dialect struct {
	// Param returns the placeholder of the nth argument, from 1.
	Param func(n int) string
	// Binary follows an expression of text to compare it by its bytes.
	Binary string
	// Time is a time as the engine's columns hold it.
	Time func(time.Time) any
}

// ClientListSQL returns the statement of ListClients for f, of the
// columns cols of clients (the table named c), and its arguments. Each
// filter adds its condition only when given, so that the engine plans
// each shape on its index: by creation time (clients_created), by name
// prefix (clients_name), by label (client_labels_search), by label and
// name prefix (client_labels_name), the first label driving, the others
// checked row by row on the client's own (client_labels' key); within a
// workspace, by its clients (clients_workspace_created,
// clients_workspace_name).
func ClientListSQL(d Dialect, cols string, f ClientFilter) (string, []any) {
	q := clientQuery{d: d}
	from, order := "clients c", "c.created_at, c.id"+d.Binary
	labels, id := f.Labels, "c.id"
	// Within a workspace, its clients drive (clients_workspace_created,
	// clients_workspace_name) and every label is checked row by row: a
	// label's index would give every workspace's clients first.
	byLabel := len(labels) > 0 && f.WorkspaceID == ""
	if byLabel {
		from, id = "client_labels l JOIN clients c ON c.id = l.client_id", "l.client_id"
		q.where("l.key = " + q.arg(labels[0].Key) + " AND l.value = " + q.arg(labels[0].Value))
		labels = labels[1:]
	}
	switch {
	case f.NamePrefix != "" && byLabel:
		q.nameRange("l.name_key", "l.client_id", f)
		order = "l.name_key, l.client_id"
	case f.NamePrefix != "":
		q.nameRange("c.name_key", "c.id"+d.Binary, f)
		order = "c.name_key, c.id" + d.Binary
	case byLabel:
		q.after("l.created_at, l.client_id", f.After)
		order = "l.created_at, l.client_id"
	default:
		q.after("c.created_at, c.id"+d.Binary, f.After)
	}
	for _, l := range labels {
		// A scalar subquery, not EXISTS: the engine checks each row the
		// driving index gives, in order, by the client's own label
		// (client_labels' key), and stops at the page's end, where a
		// semi-join would read every client of the label first.
		q.where("(SELECT o.value FROM client_labels o WHERE o.client_id = " + id + " AND o.key = " + q.arg(l.Key) +
			") = " + q.arg(l.Value))
	}
	if f.WorkspaceID != "" {
		q.where("c.workspace_id = " + q.arg(f.WorkspaceID))
	}
	if f.Status != "" {
		q.where("c.status = " + q.arg(string(f.Status)))
	}
	sql := "SELECT " + cols + " FROM " + from + q.conditions() + " ORDER BY " + order
	if f.Limit > 0 {
		sql += " LIMIT " + q.arg(f.Limit)
	}
	return sql, q.args
}

// nameRange selects the names that start with f's prefix, after f's
// cursor in the order of (name, id), the columns given.
func (q *clientQuery) nameRange(name, id string, f ClientFilter) {
	lo, hi := NameRange(f.NamePrefix)
	q.where(name + " >= " + q.arg(lo))
	if hi != "" {
		q.where(name + " < " + q.arg(hi))
	}
	if f.After.ID != "" {
		q.where("(" + name + ", " + id + ") > (" + q.arg(f.After.Name) + ", " + q.arg(f.After.ID) + ")")
	}
}

// after selects what comes after the cursor in the order of (created_at,
// id), the columns given.
func (q *clientQuery) after(cols string, after ClientCursor) {
	if !after.CreatedAt.IsZero() {
		q.where("(" + cols + ") > (" + q.arg(q.d.Time(after.CreatedAt)) + ", " + q.arg(after.ID) + ")")
	}
}

// clientQuery collects a statement's conditions and arguments.
type clientQuery struct {
	d     Dialect
	conds []string
	args  []any
}

func (q *clientQuery) arg(v any) string {
	q.args = append(q.args, v)
	return q.d.Param(len(q.args))
}

func (q *clientQuery) where(cond string) { q.conds = append(q.conds, cond) }

func (q *clientQuery) conditions() string {
	if len(q.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(q.conds, " AND ")
}
