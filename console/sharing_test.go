package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSharing: alice grants a client another workspace from its page; the
// result shows the sharing key once (reloaded, without it, and no second
// grant); the sharing page lists the grant, by workspace and by status;
// she revokes it from a confirmation that names it, back on the client's
// page where it shows revoked; bad input, a grant revoked already and the
// auditor's forms are refused.
func TestSharing(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	a := s.consoles[alice].signIn()
	client := newClient(t, a, "acme")
	newClient(t, a, "globex")
	_, body := a.get("/clients/" + client)
	form := formOf(t, body, "/sharing")
	form.Set("workspace", "globex")
	granted := a.post("/sharing", form)
	page := a.follow(granted)
	key := find(t, page.body, `id="secret">(hdc_sk_[^<]+)<`)
	grant := find(t, page.body, `id="grant-id">([^<]+)<`)
	if again := a.follow(granted); strings.Contains(again.body, key) || !strings.Contains(again.body, `id="shown"`) {
		t.Fatalf("the grant's page reloaded:\n%s", again.body)
	}
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{"", true}, {"?workspace=globex", true}, {"?workspace=acme", false}, {"?status=revoked", false}, {"?client=" + client, true},
	} {
		if _, body := a.get("/sharing" + tc.query); strings.Contains(body, `data-grant="`+grant+`"`) != tc.want || strings.Contains(body, key) {
			t.Errorf("/sharing%s lists the grant: %v, want %v", tc.query, !tc.want, tc.want)
		}
	}
	for _, tc := range []struct {
		name, path string
		form       url.Values
		status     int
	}{
		{"no workspace", "/sharing", url.Values{"client": {client}}, 400},
		{"no such client", "/sharing", url.Values{"client": {"no-such-client"}, "workspace": {"globex"}}, 404},
		{"its own workspace", "/sharing", url.Values{"client": {client}, "workspace": {"acme"}}, 400},
		{"no such grant", "/sharing/00000000-0000-4000-8000-000000000000/revoke", url.Values{}, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := a.submit(tc.path, tc.form); got.status != tc.status || !strings.Contains(got.body, `id="detail"`) {
				t.Fatalf("%d, want %d and a problem page:\n%s", got.status, tc.status, got.body)
			}
		})
	}
	if got := s.consoles[bob].signIn().submit("/sharing/"+grant+"/revoke", nil); got.status != http.StatusForbidden {
		t.Fatalf("the auditor's revocation: %d", got.status)
	}
	_, body = a.get("/sharing/" + grant + "/confirm")
	if !strings.Contains(body, client) || !strings.Contains(body, "globex") || !strings.Contains(body, "within 2 seconds") {
		t.Fatalf("the revocation's confirmation:\n%s", body)
	}
	revoked := a.post("/sharing/"+grant+"/revoke", formOf(t, body, "/sharing/"+grant+"/revoke"))
	if revoked.status != http.StatusSeeOther || revoked.location != "/clients/"+client {
		t.Fatalf("the revocation: %d to %q", revoked.status, revoked.location)
	}
	if page := a.follow(revoked); strings.Contains(page.body, `href="/sharing/`+grant+`/confirm"`) || !strings.Contains(page.body, `data-grant="`+grant+`"`) {
		t.Fatalf("the client's page after the revocation:\n%s", page.body)
	}
	if status, _ := a.get("/sharing/" + grant + "/confirm"); status != http.StatusBadRequest {
		t.Fatalf("the confirmation of a revoked grant: %d", status)
	}
}
