package console

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestEveryRouteServed: each route Routes names (the docs' table of the
// operator's commands is held to them) is one the console serves: a
// request to it, with placeholder ids, reaches a page, a change or a
// download, never the console's "no such page".
func TestEveryRouteServed(t *testing.T) {
	t.Parallel()
	b := newStack(t).consoles[alice].signIn()
	wildcard := regexp.MustCompile(`\{[a-z]+\}`)
	routes := Routes()
	if len(routes) < 40 {
		t.Fatalf("Routes() names %d routes", len(routes))
	}
	seen := map[string]bool{}
	for _, rt := range routes {
		if seen[rt] {
			t.Errorf("%s is in the table twice", rt)
		}
		seen[rt] = true
		method, path, _ := strings.Cut(rt, " ")
		path = strings.TrimSuffix(wildcard.ReplaceAllString(path, "none"), "{$}")
		var status int
		var body string
		if method == http.MethodGet {
			status, body = b.get(path)
		} else {
			got := b.submit(path, nil)
			status, body = got.status, got.body
		}
		if status == http.StatusNotFound && strings.Contains(body, errNoPage.Detail) {
			t.Errorf("%s: the console has no such page", rt)
		}
	}
}

// TestKeysPage: every client's keys, by client, workspace and status,
// with their last use; a status that is none is a 400 problem page.
func TestKeysPage(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	a := s.consoles[alice].signIn()
	c1, c2 := newClient(t, a, "acme"), newClient(t, a, "globex")
	for _, c := range []string{c1, c2} {
		_, body := a.get("/clients/" + c)
		a.follow(a.post("/clients/"+c+"/keys", formOf(t, body, "/clients/"+c+"/keys")))
	}
	for _, tc := range []struct {
		query      string
		want, lack string
	}{
		{"", c1, ""}, {"?workspace=globex", c2, c1}, {"?client=" + c1, c1, c2}, {"?status=retired", "No key matches.", c1},
	} {
		if _, body := a.get("/keys" + tc.query); !strings.Contains(body, tc.want) || tc.lack != "" && strings.Contains(body, tc.lack) {
			t.Errorf("/keys%s: want %s, not %q:\n%s", tc.query, tc.want, tc.lack, body)
		}
	}
	if status, _ := a.get("/keys?status=lost"); status != http.StatusBadRequest {
		t.Fatalf("/keys?status=lost: %d", status)
	}
}
