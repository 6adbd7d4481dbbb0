package edge

import "net/http"

// The handlers read and set the header fields of every request by names
// that are canonical already (TestCanonicalFieldNames holds them to it),
// on the map itself, and delete them with the built-in delete: the methods
// of http.Header canonicalize the name again on every call, a few hundred
// instructions each, dozens of times a request.

// Field returns the first value of the field with the canonical name.
func Field(h http.Header, name string) string {
	if v := h[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// SetField sets the field with the canonical name to value.
func SetField(h http.Header, name, value string) { h[name] = []string{value} }
