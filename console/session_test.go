package console

import (
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestUnauthorizedPage: the page a browser gets without a session (none
// yet, an expired one, a wrong or spent login link) says how to get a new
// login URL, and each of its links leads to a page that answers without a
// session.
func TestUnauthorizedPage(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.consoles[alice]
	spent := b.token
	b.signIn()
	b.srv.sessions.mu.Lock()
	b.srv.sessions.now = func() time.Time { return time.Now().Add(sessionLife) }
	b.srv.sessions.mu.Unlock()
	stranger := serve(t, nil) // a browser with no cookie, on alice's console
	stranger.url = b.url
	for _, c := range []struct {
		name string
		b    *browser
		path string
	}{
		{"no session", stranger, "/fleet"},
		{"an expired session", b, "/webhooks"},
		{"a wrong login link", stranger, "/login?token=wrong"},
		{"a spent login link", stranger, "/login?token=" + spent},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := c.b.get(c.path)
			if status != http.StatusUnauthorized || !strings.Contains(body, "hdc console") || !strings.Contains(body, "new login URL") {
				t.Fatalf("%s: %d, want 401 saying how to get a new login URL:\n%s", c.path, status, body)
			}
			for _, m := range anchor.FindAllStringSubmatch(body, -1) {
				href := html.UnescapeString(m[1])
				if got, _ := stranger.get(href); got >= 400 {
					t.Errorf("the 401 page of %s links to %s, which answers %d without a session", c.path, href, got)
				}
			}
		})
	}
}

// anchor is a link of a page: its href.
var anchor = regexp.MustCompile(`<a [^>]*href="([^"]*)"`)
