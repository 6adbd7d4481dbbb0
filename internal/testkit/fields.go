package testkit

import (
	"net/textproto"
	"testing"
)

// CanonicalFields checks, a subtest per list, that every header field
// name of the lists is canonical: a handler that reads, sets or deletes a
// name straight in the header map would never match one that is not.
func CanonicalFields(t *testing.T, lists map[string][]string) {
	t.Helper()
	for list, names := range lists {
		t.Run(list, func(t *testing.T) {
			for _, name := range names {
				if c := textproto.CanonicalMIMEHeaderKey(name); c != name {
					t.Errorf("%q is not canonical: %q", name, c)
				}
			}
		})
	}
}
