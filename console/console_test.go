package console

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// TestSession: the token admits one browser once, with an HttpOnly,
// SameSite=Strict cookie; without it every page is refused.
func TestSession(t *testing.T) {
	t.Parallel()
	b := newStack(t).consoles[alice]
	if status, _ := b.get("/fleet"); status != http.StatusUnauthorized {
		t.Fatalf("/fleet without a session: %d, want 401", status)
	}
	if status, _ := b.get("/login?token=wrong"); status != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %d, want 401", status)
	}
	resp, err := b.http.Get(b.url + "/login?token=" + b.token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("sign in: %d %+v; want 303 and an HttpOnly SameSite=Strict cookie", resp.StatusCode, cookies)
	}
	if status, body := b.get("/fleet"); status != http.StatusOK || !strings.Contains(body, alice) ||
		!strings.Contains(body, "Deliveries pending") || !strings.Contains(body, "none pending") {
		t.Fatalf("/fleet signed in: %d %s", status, body)
	}
	other := serve(t, nil) // a second browser with the spent token: the first console's
	other.url = b.url
	if status, _ := other.get("/login?token=" + b.token); status != http.StatusUnauthorized {
		t.Fatalf("the token used again: %d, want 401", status)
	}
}

// TestHeaders: every answer carries a strict policy, no inline script,
// and is not cached.
func TestHeaders(t *testing.T) {
	t.Parallel()
	b := newStack(t).consoles[alice].signIn()
	for _, path := range []string{"/fleet", "/login?token=spent", "/static/console.css", "/nowhere"} {
		t.Run(path, func(t *testing.T) {
			resp, err := b.http.Get(b.url + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			csp := resp.Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") || resp.Header.Get("Cache-Control") != "no-store" {
				t.Fatalf("headers: %v", resp.Header)
			}
		})
	}
}

// TestCSRF: a change without the session's token, or from another
// origin, is refused before it reaches the API.
func TestCSRF(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.consoles[alice].signIn()
	token := b.csrf()
	for _, tc := range []struct {
		name   string
		form   url.Values
		site   string
		status int
	}{
		{"no token", url.Values{"workspace": {"acme"}}, "same-origin", http.StatusForbidden},
		{"a wrong token", url.Values{"workspace": {"acme"}, "csrf": {"x" + token}}, "same-origin", http.StatusForbidden},
		{"another site", url.Values{"workspace": {"acme"}, "csrf": {token}}, "cross-site", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, b.url+"/clients", strings.NewReader(tc.form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", tc.site)
			resp, err := b.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("%d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
	if cs, err := s.st.ListClients(t.Context(), store.ClientFilter{}); err != nil || len(cs) != 0 {
		t.Fatalf("clients after the refusals: %v, %v; want none", cs, err)
	}
}

// TestOperator: alice creates a client, adds a key, rotates, retires the
// old key after confirming, and finds her changes in the audit search as
// sentences naming her.
func TestOperator(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.consoles[alice].signIn()
	_, body := b.get("/clients")
	form := formOf(t, body, "/clients")
	form.Set("workspace", "acme")
	page := b.follow(b.post("/clients", form))
	client := find(t, page.body, `id="new-client" href="/clients/([^"]+)"`)
	if !strings.Contains(page.body, `id="secret"`) {
		t.Fatalf("the new client's page shows no secret:\n%s", page.body)
	}
	_, body = b.get("/clients/" + client)
	form = formOf(t, body, "/clients/"+client+"/keys")
	form.Set("kid", "k-old")
	form.Set("enc", "A256GCM")
	if page = b.follow(b.post("/clients/"+client+"/keys", form)); !strings.Contains(page.body, `&#34;jwk&#34;`) || !strings.Contains(page.body, `id="kid">k-old<`) {
		t.Fatalf("add key:\n%s", page.body)
	}
	if _, body = b.get("/clients/" + client + "/confirm?action=rotate"); !strings.Contains(body, "k-old") || !strings.Contains(body, "never") {
		t.Fatalf("the rotation's confirmation does not show k-old's last use:\n%s", body)
	}
	page = b.follow(b.post("/clients/"+client+"/keys/rotate", formOf(t, body, "/clients/"+client+"/keys/rotate")))
	newKid := find(t, page.body, `id="kid">([^<]+)<`)
	if !strings.Contains(page.body, "k-old") {
		t.Fatalf("the rotation's page names no retiring k-old:\n%s", page.body)
	}
	_, body = b.get("/clients/" + client + "/confirm?action=retire&kid=k-old")
	if got := b.post("/keys/k-old/retire", formOf(t, body, "/keys/k-old/retire")); got.location != "/clients/"+client {
		t.Fatalf("retire: %d to %q", got.status, got.location)
	}
	_, body = b.get("/clients/" + client)
	if !strings.Contains(body, newKid) || !regexp.MustCompile(`data-kid="k-old">.*class="status">retired<`).MatchString(body) {
		t.Fatalf("the client's page:\n%s", body)
	}
	_, body = b.get("/audit?agent=" + url.QueryEscape(alice))
	for _, want := range []string{alice + " created the client " + client + " in acme at ", alice + " rotated to the new key " + newKid + ", retiring k-old in acme",
		alice + " retired the key k-old"} {
		if !strings.Contains(html.UnescapeString(body), want) {
			t.Errorf("the audit search shows no %q:\n%s", want, body)
		}
	}
}

// TestAuditor: bob's pages show no change, and a change he forges with
// his session's CSRF token is refused by the API, which records nothing.
func TestAuditor(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	creds, err := identity.New(s.st, 1).CreateClient(t.Context(), audit.Person{Name: alice, Role: contract.RoleOperator, Direct: true}, "acme", identity.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	b := s.consoles[bob].signIn()
	for _, path := range []string{"/fleet", "/clients", "/clients/" + creds.ClientID, "/clients/" + creds.ClientID + "/confirm?action=rotate",
		"/clients/" + creds.ClientID + "/confirm?action=disable", "/webhooks", "/audit", "/audit/verify", "/keys", "/sharing",
		"/workspaces", "/workspaces/acme", "/people", "/people/confirm?serial=0a"} {
		status, body := b.get(path)
		if status != http.StatusOK || strings.Contains(body, `method="post"`) || !strings.Contains(body, "(read only)") {
			t.Errorf("%s as the auditor: %d, or a change offered", path, status)
		}
	}
	for _, tc := range []struct{ path string }{{"/clients"}, {"/clients/" + creds.ClientID + "/keys"}, {"/clients/" + creds.ClientID + "/disable"},
		{"/webhooks/00000000-0000-4000-8000-000000000000/delete"}, {"/clients/" + creds.ClientID + "/limits"},
		{"/clients/" + creds.ClientID + "/limits/clear"}, {"/workspaces/acme/destinations"}} {
		// the auditor's pages have no form: he forges one with his
		// session's CSRF token and a key of his own
		got := b.submit(tc.path, url.Values{"workspace": {"acme"}})
		if got.status != http.StatusForbidden || !strings.Contains(got.body, `id="detail"`) {
			t.Errorf("POST %s as the auditor: %d, want the API's 403", tc.path, got.status)
		}
	}
	if cs, _ := s.st.ListClients(t.Context(), store.ClientFilter{}); len(cs) != 1 || cs[0].Status != store.ClientActive {
		t.Fatalf("clients after the auditor's posts: %+v", cs)
	}
}

// TestBadInput: what a person typed wrong is a 4xx problem page, never a
// 5xx.
func TestBadInput(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.consoles[alice].signIn()
	for _, tc := range []struct {
		name, method, path string
		form               url.Values
		status             int
	}{
		{"a time that is not one", "GET", "/audit?since=yesterday", nil, 400},
		{"an unknown agent's syntax", "GET", "/audit?agent=" + url.QueryEscape("not a name"), nil, 400},
		{"a status that is not one", "GET", "/clients?status=sleeping", nil, 400},
		{"a cursor the API did not give", "GET", "/clients?cursor=xyz", nil, 400},
		{"no such client", "GET", "/clients/no-such-client", nil, 404},
		{"an unknown confirmation", "GET", "/clients/c/confirm?action=nuke", nil, 400},
		{"no such page", "GET", "/nowhere", nil, 404},
		{"an unknown confirmation of a subscription", "GET", "/webhooks/00000000-0000-4000-8000-000000000000/confirm?action=nuke", nil, 400},
		{"the deletion of no subscription", "GET", "/webhooks/00000000-0000-4000-8000-000000000000/confirm?action=delete", nil, 404},
		{"the disabling of no client", "GET", "/clients/no-such-client/confirm?action=disable", nil, 404},
		{"no such result", "GET", "/results/" + formKey(), nil, 404},
		{"no workspace", "POST", "/clients", nil, 400},
		{"a key of no client", "POST", "/clients/no-such-client/keys", nil, 404},
		{"no such subscription", "POST", "/webhooks/00000000-0000-4000-8000-000000000000/delete", nil, 404},
		{"a checkbox's odd value", "POST", "/clients/c/keys", url.Values{"require_fresh": {"maybe"}}, 400},
		{"a one-time key not the console's", "POST", "/clients", url.Values{"workspace": {"acme"}, "once": {"x"}}, 400},
		{"the keys of a status that is none", "GET", "/keys?status=lost", nil, 400},
		{"no such workspace", "GET", "/workspaces/nowhere", nil, 404},
		{"no such grant", "GET", "/sharing/00000000-0000-4000-8000-000000000000/confirm", nil, 404},
		{"the limits of no client", "POST", "/clients/no-such-client/limits", nil, 404},
		{"the enabling of no subscription", "POST", "/webhooks/00000000-0000-4000-8000-000000000000/enable", nil, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var status int
			var body string
			if tc.method == "GET" {
				status, body = b.get(tc.path)
			} else {
				got := b.submit(tc.path, tc.form)
				status, body = got.status, got.body
			}
			if status != tc.status || !strings.Contains(body, `id="detail"`) {
				t.Fatalf("%d, want %d and a problem page:\n%s", status, tc.status, body)
			}
		})
	}
}

// TestNoSecretInLogs: the log names paths and statuses, never the token,
// a query, a form or a secret the page showed.
func TestNoSecretInLogs(t *testing.T) {
	t.Parallel()
	b := newStack(t).consoles[alice].signIn()
	page := b.follow(b.submit("/clients", url.Values{"workspace": {"acme"}}))
	secret := find(t, page.body, `id="secret">([^<]+)<`)
	b.get("/audit?agent=" + url.QueryEscape(alice))
	for _, e := range b.logs.All() {
		line := e.Message
		for _, f := range e.Context {
			line += " " + f.String
		}
		for _, bad := range []string{b.token, secret, "csrf", "once", "agent="} {
			if strings.Contains(line, bad) {
				t.Fatalf("a log line carries %q: %s", bad, line)
			}
		}
	}
	if b.logs.Len() == 0 {
		t.Fatal("nothing logged")
	}
}

// formOf returns the hidden fields of body's form that posts to action.
func formOf(t *testing.T, body, action string) url.Values {
	t.Helper()
	form := regexp.MustCompile(`(?s)<form method="post" action="` + regexp.QuoteMeta(action) + `".*?</form>`).FindString(body)
	if form == "" {
		t.Fatalf("no form posts to %s:\n%s", action, body)
	}
	out := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`).FindAllStringSubmatch(form, -1) {
		out.Add(m[1], m[2])
	}
	return out
}

// find returns the first group of pattern in body.
func find(t *testing.T, body, pattern string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no %s in:\n%s", pattern, body)
	}
	return m[1]
}
