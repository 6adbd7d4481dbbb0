package console

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"testing"
)

// TestAuditOrder: the audit page shows every trail's records together,
// newest first, unless asked oldest first, trail by trail; an order of
// neither is a 400 problem.
func TestAuditOrder(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	a := s.consoles[alice].signIn()
	for _, ws := range []string{"zeta", "acme", "mid"} { // created in this order; the trails' order is acme, mid, zeta
		if got := a.submit("/clients", url.Values{"workspace": {ws}}); got.status != http.StatusSeeOther {
			t.Fatalf("create a client in %s: %d %s", ws, got.status, got.body)
		}
	}
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"", []string{"mid", "acme", "zeta"}},
		{"&order=newest", []string{"mid", "acme", "zeta"}},
		{"&order=oldest", []string{"acme", "mid", "zeta"}},
	} {
		_, body := a.get("/audit?action=client_create" + tt.query)
		if got := createdIn(body); !slices.Equal(got, tt.want) {
			t.Errorf("/audit?action=client_create%s: the creations in %v, want %v", tt.query, got, tt.want)
		}
		if oldest := regexp.MustCompile(`<option value="oldest" selected>`).MatchString(body); oldest != (tt.query == "&order=oldest") {
			t.Errorf("%s: the form shows oldest first selected: %v", tt.query, oldest)
		}
	}
	if status, _ := a.get("/audit?order=sideways"); status != http.StatusBadRequest {
		t.Errorf("order=sideways: %d, want 400", status)
	}
}

// createdIn returns the workspace of each client creation the audit page
// shows, in its order.
func createdIn(body string) []string {
	var out []string
	for _, m := range creation.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

var creation = regexp.MustCompile(`created the client [^ ]+ in ([a-z]+) at `)
