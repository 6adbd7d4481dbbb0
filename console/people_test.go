package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestPeopleAndRevocation: the people's page lists both persons who used
// the API, by name, with their serials; alice revokes bob's certificate
// from a confirmation that names it, after which the page shows it
// revoked and on the deny-list and bob's console gets the API's refusal;
// her own certificate is the API's 409, shown as its problem; bad input is
// a 4xx problem page.
func TestPeopleAndRevocation(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	a, b := s.consoles[alice].signIn(), s.consoles[bob].signIn()
	b.get("/fleet")
	_, body := a.get("/people")
	aliceSerial := find(t, body, `data-serial="([0-9a-f]+)"><td>`+alice+` \(you\)`)
	bobSerial := find(t, body, `data-serial="([0-9a-f]+)"><td>`+bob+`<`)
	if strings.Index(body, alice) > strings.Index(body, bob) || !strings.Contains(body, "No certificate is revoked.") {
		t.Fatalf("the people's page:\n%s", body)
	}
	for _, tc := range []struct {
		name, path string
		form       url.Values
		status     int
		detail     string
	}{
		{"no serial to confirm", "/people/confirm", nil, 400, "serial"},
		{"no serial to revoke", "/revocations", url.Values{}, 400, "serial must be"},
		{"her own certificate", "/revocations", url.Values{"serial": {aliceSerial}}, 409, "another operator revokes it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := 0, ""
			if tc.form == nil {
				status, body = a.get(tc.path)
			} else {
				got := a.submit(tc.path, tc.form)
				status, body = got.status, got.body
			}
			if status != tc.status || !strings.Contains(body, `id="detail"`) || !strings.Contains(body, tc.detail) {
				t.Fatalf("%d, want %d and a problem page saying %q:\n%s", status, tc.status, tc.detail, body)
			}
		})
	}
	confirm := "/people/confirm?" + url.Values{"serial": {bobSerial}, "name": {bob}, "role": {"auditor"}}.Encode()
	if got := b.submit("/revocations", url.Values{"serial": {aliceSerial}}); got.status != http.StatusForbidden {
		t.Fatalf("the auditor's revocation: %d", got.status)
	}
	_, body = a.get(confirm)
	if !strings.Contains(body, bobSerial) || !strings.Contains(body, bob) || !strings.Contains(body, "within 2 seconds") {
		t.Fatalf("the revocation's confirmation:\n%s", body)
	}
	if got := a.post("/revocations", formOf(t, body, "/revocations")); got.status != http.StatusSeeOther || got.location != "/people" {
		t.Fatalf("the revocation: %d to %q\n%s", got.status, got.location, got.body)
	}
	_, body = a.get("/people")
	if !strings.Contains(body, `data-serial="`+bobSerial+`"><td class="id"><code>`+bobSerial+`</code></td><td>`+bob) ||
		!strings.Contains(body, `class="status"><span class="bad">revoked</span>`) {
		t.Fatalf("the people's page after the revocation:\n%s", body)
	}
	if status, body := b.get("/clients"); status != http.StatusForbidden || !strings.Contains(body, "revoked") {
		t.Fatalf("bob's console after his certificate's revocation: %d\n%s", status, body)
	}
}
