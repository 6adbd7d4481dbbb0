package console

import (
	"html"
	"net/http"
	"strings"
	"testing"
)

// TestClientNames: alice creates a named client with labels, finds it by
// a name's prefix and by label, edits its name and labels on its page
// (post, redirect, get: a label left out of the form is removed), and the
// audit search names the client by its name and says what moved; a label
// that is not one is a 400 page and changes nothing; a key added to it
// is the key of Clinic Seven in the audit search.
func TestClientNames(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.consoles[alice].signIn()
	_, body := b.get("/clients")
	form := formOf(t, body, "/clients")
	form.Set("workspace", "acme")
	form.Set("name", "Clinic 7")
	form.Set("labels", "env=staging tier=gold")
	page := b.follow(b.post("/clients", form))
	client := find(t, page.body, `id="new-client" href="/clients/([^"]+)"`)

	for _, search := range []string{"/clients?name_prefix=clinic", "/clients?labels=env%3Dstaging", "/clients?name_prefix=CLIN&labels=tier%3Dgold+env%3Dstaging"} {
		if _, body = b.get(search); !strings.Contains(body, ">Clinic 7</a>") || !strings.Contains(body, "env=staging tier=gold") {
			t.Fatalf("%s does not show the client:\n%s", search, body)
		}
	}
	if _, body = b.get("/clients?name_prefix=lab"); strings.Contains(body, "Clinic 7") {
		t.Fatalf("a prefix of no name shows the client:\n%s", body)
	}

	_, body = b.get("/clients/" + client)
	form = formOf(t, body, "/clients/"+client)
	form.Set("name", "Clinic Seven")
	form.Set("labels", "env=prod")
	if got := b.post("/clients/"+client, form); got.status != http.StatusSeeOther || got.location != "/clients/"+client {
		t.Fatalf("the edit: %d to %q", got.status, got.location)
	}
	_, body = b.get("/clients/" + client)
	if !strings.Contains(body, `id="client-name">Clinic Seven<`) || !strings.Contains(body, `id="client-labels">env=prod<`) {
		t.Fatalf("the client's page after the edit:\n%s", body)
	}
	_, body = b.get("/clients/" + client)
	form = formOf(t, body, "/clients/"+client)
	form.Set("labels", "env=a b=")
	if got := b.post("/clients/"+client, form); got.status != http.StatusBadRequest {
		t.Fatalf("a label that is not one: %d", got.status)
	}
	_, body = b.get("/audit?entity=" + client)
	want := alice + " changed the client Clinic Seven: name Clinic 7 → Clinic Seven, label env staging → prod, label tier removed (was gold) in acme"
	if !strings.Contains(html.UnescapeString(body), want) {
		t.Fatalf("the audit search shows no %q:\n%s", want, body)
	}

	_, body = b.get("/clients/" + client)
	form = formOf(t, body, "/clients/"+client+"/keys")
	form.Set("kid", "k-seven")
	b.follow(b.post("/clients/"+client+"/keys", form))
	_, body = b.get("/audit?entity=k-seven")
	want = alice + " added the key k-seven of Clinic Seven in acme"
	if !strings.Contains(html.UnescapeString(body), want) {
		t.Fatalf("the audit search shows no %q:\n%s", want, body)
	}
}
