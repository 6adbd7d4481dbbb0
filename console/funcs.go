package console

import (
	"html/template"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

// funcs are the templates' helpers: times as UTC (time elements) and as
// ages, and a new one-time key for each form.
var funcs = template.FuncMap{
	"when":    timeElement,
	"ago":     ago,
	"formKey": formKey,
	"labels":  labelsText,
}

// labelsText writes a client's labels as the console's forms take them:
// key=value, by key, a space between.
func labelsText(labels map[string]string) string {
	out := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		out = append(out, k+"="+labels[k])
	}
	return strings.Join(out, " ")
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

// timeElement is when's time as a time element with its RFC 3339 value,
// its date in a span the style sheet keeps on one line (a line may break
// after a hyphen), the time of day after a space a line may break at;
// "—" for none.
func timeElement(v any) template.HTML {
	t, ok := timeOf(v)
	if !ok {
		return "—"
	}
	t = t.UTC()
	return template.HTML(`<time datetime="` + t.Format(time.RFC3339) + `"><span class="date">` + t.Format(time.DateOnly) + `</span> ` +
		t.Format("15:04:05 UTC") + `</time>`)
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
