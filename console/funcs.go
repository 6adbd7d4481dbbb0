package console

import (
	"html/template"
	"time"

	"github.com/dustin/go-humanize"
)

// funcs are the templates' helpers: times as UTC and as ages, and a new
// one-time key for each form.
var funcs = template.FuncMap{
	"when":    when,
	"ago":     ago,
	"formKey": formKey,
}

// when formats a time (or a *time.Time) in UTC to the second; "—" for
// none.
func when(v any) string {
	t, ok := timeOf(v)
	if !ok {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// ago says how long ago a time (or a *time.Time) was; "never" for none.
func ago(v any) string {
	t, ok := timeOf(v)
	if !ok {
		return "never"
	}
	return humanize.Time(t)
}

func timeOf(v any) (time.Time, bool) {
	switch t := v.(type) {
	case time.Time:
		return t, !t.IsZero()
	case *time.Time:
		if t == nil || t.IsZero() {
			return time.Time{}, false
		}
		return *t, true
	}
	return time.Time{}, false
}
