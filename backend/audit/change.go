package audit

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Change is one field an operator's change moved, with its value before
// and after: a client's name or one of its labels (ClientUpdate), a
// client's limits (ClientLimitsSet, ClientLimitsClear). An empty Before
// is a field that was not set; an empty After, one the change removed.
type Change struct {
	// Field names what changed: ChangeName, ChangeLimits, or
	// ChangeLabel followed by the label's key.
	Field string
	// Before and After are the field's values: text of at most
	// MaxChangeValue bytes without control characters, never a secret
	// (the action's rule names the fields it may carry).
	Before, After string
}

// The fields a Change names.
const (
	ChangeName   = "name"
	ChangeLimits = "limits"
	ChangeLabel  = "label:" // + the label's key
)

// Bounds of a record's changes: a client's name and its labels, each
// removed and another added, fit.
const (
	MaxChanges     = 80
	MaxChangeField = 160
	MaxChangeValue = 1024
)

// validChanges reports whether cs may be the changes of an action whose
// rule allows the fields allowed: nil, or 1 to MaxChanges changes of
// distinct allowed fields, each moving a value within bounds.
func validChanges(cs []Change, allowed []string) bool {
	if cs == nil {
		return true
	}
	if len(cs) == 0 || len(cs) > MaxChanges {
		return false
	}
	seen := make(map[string]bool, len(cs))
	for _, c := range cs {
		if seen[c.Field] || !c.valid(allowed) {
			return false
		}
		seen[c.Field] = true
	}
	return true
}

// valid reports whether c names a field of allowed and moves a value to
// another.
func (c Change) valid(allowed []string) bool {
	return slices.ContainsFunc(allowed, c.fieldOf) && c.Before != c.After && validValue(c.Before) && validValue(c.After)
}

// fieldOf reports whether c's field is f, or for f a prefix ending in ':'
// (ChangeLabel), f followed by a name.
func (c Change) fieldOf(f string) bool {
	if !strings.HasSuffix(f, ":") {
		return c.Field == f
	}
	name, ok := strings.CutPrefix(c.Field, f)
	return ok && validFieldName(name)
}

// validFieldName reports whether s may follow a field's prefix: printable
// ASCII without spaces, within MaxChangeField with its prefix.
func validFieldName(s string) bool {
	if s == "" || len(s) > MaxChangeField-len(ChangeLabel) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// validValue reports whether s may be a change's value: UTF-8 of at most
// MaxChangeValue bytes without control characters.
func validValue(s string) bool {
	return len(s) <= MaxChangeValue && utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}
