package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// changes counts the audit records of alice's changes in workspace ws, by
// action: one record a change.
func changes(t *testing.T, st store.Store, ws string) map[audit.Action]int {
	t.Helper()
	rs, err := st.ListAudit(t.Context(), store.AuditFilter{Workspace: ws, Agent: alice})
	if err != nil {
		t.Fatal(err)
	}
	n := map[audit.Action]int{}
	for _, r := range rs {
		n[r.Action]++
	}
	return n
}

// TestPostRedirectGet: every change answers 303 to a page that shows its
// result. The page of a new secret shows it once: read again (a reload)
// it names the result without the secret, and makes no change.
func TestPostRedirectGet(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.consoles[alice].signIn()
	want := map[audit.Action]int{}
	check := func(step string) {
		t.Helper()
		if got := changes(t, s.st, "acme"); len(got) != len(want) || func() bool {
			for a, n := range want {
				if got[a] != n {
					return true
				}
			}
			return false
		}() {
			t.Fatalf("after %s the trail holds %v, want %v", step, got, want)
		}
	}
	created := b.submit("/clients", url.Values{"workspace": {"acme"}})
	page := b.follow(created)
	client := find(t, page.body, `id="new-client" href="/clients/([^"]+)"`)
	secret := find(t, page.body, `id="secret">([^<]+)<`)
	want[audit.ClientCreate] = 1
	shownOnce(t, b, created, secret, client)
	check("the creation read again")

	added := b.submit("/clients/"+client+"/keys", url.Values{"kid": {"k-1"}})
	page = b.follow(added)
	if !strings.Contains(page.body, `&#34;jwk&#34;`) {
		t.Fatalf("the new key's page shows no JWK:\n%s", page.body)
	}
	want[audit.KeyAdd] = 1
	shownOnce(t, b, added, find(t, page.body, `id="secret">([^<]+)<`), `id="kid">k-1<`)
	check("the new key read again")

	rotated := b.submit("/clients/"+client+"/keys/rotate", nil)
	page = b.follow(rotated)
	newKid := find(t, page.body, `id="kid">([^<]+)<`)
	want[audit.KeyRotate] = 1
	shownOnce(t, b, rotated, find(t, page.body, `id="secret">([^<]+)<`), `id="kid">`+newKid+`<`, "<code>k-1</code>")
	check("the rotation read again")

	for _, tc := range []struct {
		path   string
		form   url.Values
		action audit.Action
	}{
		{"/keys/k-1/retire", nil, audit.KeyRetire},
		{"/clients/" + client + "/disable", nil, audit.ClientDisable},
	} {
		a := b.submit(tc.path, tc.form)
		if a.location != "/clients/"+client {
			t.Fatalf("POST %s: %d to %q, want 303 to the client's page", tc.path, a.status, a.location)
		}
		want[tc.action] = 1
		for range 2 {
			if p := b.follow(a); p.status != http.StatusOK || !strings.Contains(p.body, `id="client-id">`+client+`<`) {
				t.Fatalf("the client's page after POST %s: %d", tc.path, p.status)
			}
		}
		check(tc.path + "'s page read again")
	}
}

// shownOnce reads the page a's 303 sends to again, as a reload does: it
// shows each of names but not the secret.
func shownOnce(t *testing.T, b *browser, a answer, secret string, names ...string) {
	t.Helper()
	again := b.follow(a)
	if again.status != http.StatusOK || strings.Contains(again.body, secret) || strings.Contains(again.body, `id="secret"`) ||
		!strings.Contains(again.body, `id="shown"`) {
		t.Fatalf("the page of %s read again: %d, want 200 without the secret:\n%s", a.location, again.status, again.body)
	}
	for _, n := range names {
		if !strings.Contains(again.body, n) {
			t.Errorf("the page of %s read again names no %q:\n%s", a.location, n, again.body)
		}
	}
}

// TestSentTwice: a form sent twice, one after the other or both at once
// (a double click, the back button and send again), makes one change and
// sends both to the same result, whose secret shows once; the same key
// on another form is refused and changes nothing; a form without a key is
// refused.
func TestSentTwice(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.consoles[alice].signIn()
	form := url.Values{"csrf": {b.sessionCSRF()}, "once": {formKey()}, "workspace": {"acme"}}
	first, second := b.post("/clients", form), b.post("/clients", form)
	if first.status != http.StatusSeeOther || second.location != first.location {
		t.Fatalf("the form sent twice: %d to %q, then %d to %q; want 303 to one result", first.status, first.location, second.status, second.location)
	}
	secret := find(t, b.follow(second).body, `id="secret">([^<]+)<`)
	shownOnce(t, b, first, secret)

	var wg sync.WaitGroup
	both := make([]answer, 2)
	together := url.Values{"csrf": form["csrf"], "once": {formKey()}, "workspace": {"acme"}}
	for i := range both {
		wg.Go(func() { both[i] = b.post("/clients", together) })
	}
	wg.Wait()
	if both[0].status != http.StatusSeeOther || both[1].location != both[0].location {
		t.Fatalf("the form sent twice at once: %+v", both)
	}
	if n := changes(t, s.st, "acme")[audit.ClientCreate]; n != 2 {
		t.Fatalf("two forms, each sent twice, made %d clients, want 2", n)
	}

	other := url.Values{"csrf": form["csrf"], "once": form["once"], "workspace": {"other"}}
	if a := b.post("/clients", other); a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, `id="detail"`) {
		t.Fatalf("a form's key on another form: %d, want 422 and a problem page:\n%s", a.status, a.body)
	}
	noKey := url.Values{"csrf": form["csrf"], "workspace": {"other"}}
	if a := b.post("/clients", noKey); a.status != http.StatusBadRequest || !strings.Contains(a.body, `id="detail"`) {
		t.Fatalf("a form without its key: %d, want 400 and a problem page:\n%s", a.status, a.body)
	}
	if n := len(changes(t, s.st, "other")); n != 0 {
		t.Fatalf("the refused forms made %d changes", n)
	}
}

// TestSecretExpires: a secret not shown within its time is gone: its
// page, read for the first time, names the result without it, and its
// credentials file is gone too.
func TestSecretExpires(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.consoles[alice]
	b.srv.sessions.mu.Lock()
	b.srv.sessions.secretLife = time.Millisecond
	b.srv.sessions.mu.Unlock()
	b.signIn()
	created := b.submit("/clients", url.Values{"workspace": {"acme"}})
	key := strings.TrimPrefix(created.location, "/results/")
	deadline := time.Now().Add(10 * time.Second)
	for b.secretHeld(key) {
		if time.Now().After(deadline) {
			t.Fatal("the console still holds the secret after its time")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if page := b.follow(created); !strings.Contains(page.body, `id="shown"`) || strings.Contains(page.body, `id="secret"`) {
		t.Fatalf("the page of an expired secret:\n%s", page.body)
	}
	if status, _ := b.get(created.location + "/credentials"); status != http.StatusGone {
		t.Fatalf("the credentials file of an expired secret: %d, want 410", status)
	}
}

// secretHeld reports whether the console's one session holds the secret
// of the form key's result.
func (b *browser) secretHeld(key string) bool {
	b.t.Helper()
	b.srv.sessions.mu.Lock()
	var res *results
	for _, s := range b.srv.sessions.byID {
		res = s.results
	}
	b.srv.sessions.mu.Unlock()
	res.mu.Lock()
	defer res.mu.Unlock()
	o, ok := res.byKey[key]
	if !ok {
		b.t.Fatalf("no result of the form %s", key)
	}
	return o.once != nil
}

// TestOutcomesBounded: a session keeps the newest maxOutcomes settled
// outcomes and forgets the oldest, but never one under way.
func TestOutcomesBounded(t *testing.T) {
	t.Parallel()
	rs := newResults(time.Minute)
	pending, _ := rs.claim("pending", [32]byte{})
	for i := range maxOutcomes + 10 {
		key := fmt.Sprintf("k%04d", i)
		o, first := rs.claim(key, [32]byte{})
		if !first {
			t.Fatalf("%s claimed twice", key)
		}
		rs.settle(key, o, view{Redirect: "/clients"}, nil)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if n := len(rs.byKey); n != maxOutcomes {
		t.Errorf("the session keeps %d outcomes, want %d", n, maxOutcomes)
	}
	if rs.byKey["pending"] != pending {
		t.Error("the outcome under way was forgotten")
	}
	for _, tc := range []struct {
		key  string
		kept bool
	}{{"k0000", false}, {"k0010", false}, {"k0011", true}, {fmt.Sprintf("k%04d", maxOutcomes+9), true}} {
		if _, ok := rs.byKey[tc.key]; ok != tc.kept {
			t.Errorf("%s kept: %v, want %v", tc.key, ok, tc.kept)
		}
	}
	if len(rs.order) != len(rs.byKey) {
		t.Errorf("%d keys in order for %d outcomes", len(rs.order), len(rs.byKey))
	}
}
