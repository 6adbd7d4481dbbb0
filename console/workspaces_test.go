package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestDestinations: the workspaces page lists the workspaces; alice grants
// one a private receiver from its page, and revokes it from a confirmation
// that names it; what the form or the API refuses is a 4xx problem page
// that grants nothing.
func TestDestinations(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	a := s.consoles[alice].signIn()
	newClient(t, a, "acme")
	if _, body := a.get("/workspaces"); !strings.Contains(body, `href="/workspaces/acme"`) {
		t.Fatalf("the workspaces page:\n%s", body)
	}
	_, body := a.get("/workspaces/acme")
	if !strings.Contains(body, "No private receiver is granted.") {
		t.Fatalf("acme's page:\n%s", body)
	}
	form := formOf(t, body, "/workspaces/acme/destinations")
	for _, tc := range []struct {
		name, prefix, port string
		status             int
	}{
		{"a port that is no number", "10.0.0.31", "http", 400},
		{"port 0", "10.0.0.31", "0", 400},
		{"a host name", "hooks.internal", "", 400},
		{"no address", "", "", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := a.submit("/workspaces/acme/destinations", url.Values{"prefix": {tc.prefix}, "port": {tc.port}})
			if got.status != tc.status || !strings.Contains(got.body, `id="detail"`) {
				t.Fatalf("%d, want %d and a problem page:\n%s", got.status, tc.status, got.body)
			}
		})
	}
	if got := a.submit("/workspaces/nowhere/destinations", url.Values{"prefix": {"10.0.0.31"}}); got.status != http.StatusNotFound {
		t.Fatalf("a grant to no workspace: %d", got.status)
	}
	form.Set("prefix", "10.0.0.31")
	form.Set("port", "9999")
	if got := a.post("/workspaces/acme/destinations", form); got.status != http.StatusSeeOther || got.location != "/workspaces/acme" {
		t.Fatalf("the grant: %d to %q\n%s", got.status, got.location, got.body)
	}
	_, body = a.get("/workspaces/acme")
	grant := find(t, body, `data-destination="([^"]+)"><td class="id">10.0.0.31/32</td><td>9999</td>`)
	confirm := "/workspaces/acme/destinations/" + grant + "/confirm"
	_, body = a.get(confirm)
	if !strings.Contains(body, "10.0.0.31/32") || !strings.Contains(body, "9999") || !strings.Contains(body, alice) {
		t.Fatalf("the revocation's confirmation:\n%s", body)
	}
	if got := a.post(strings.TrimSuffix(confirm, "/confirm")+"/revoke", formOf(t, body, strings.TrimSuffix(confirm, "/confirm")+"/revoke")); got.status != http.StatusSeeOther {
		t.Fatalf("the revocation: %d\n%s", got.status, got.body)
	}
	if _, body = a.get("/workspaces/acme"); !strings.Contains(body, " by "+alice) || strings.Contains(body, confirm) {
		t.Fatalf("acme's page after the revocation:\n%s", body)
	}
	for path, status := range map[string]int{confirm: 400, "/workspaces/acme/destinations/00000000-0000-4000-8000-000000000000/confirm": 404,
		"/workspaces/nowhere": 404} {
		if got, _ := a.get(path); got != status {
			t.Errorf("%s: %d, want %d", path, got, status)
		}
	}
}
