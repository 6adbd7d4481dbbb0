package console

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// TestConfirmDestruction: disabling a client and deleting a subscription
// are asked first, as rotating and retiring are: the client's and the
// subscription's pages link to a confirmation, and no form of theirs
// makes the change. The confirmation names what will happen (the client's
// keys that stop working, the subscription's deliveries still to be
// sent) and its form makes it.
func TestConfirmDestruction(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.consoles[alice].signIn()
	by := audit.Person{Name: alice, Role: contract.RoleOperator, Direct: true}
	creds, err := identity.New(s.st, 1).CreateClient(t.Context(), by, "acme", identity.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	client, keys := creds.ClientID, keyadmin.New(s.st)
	for _, kid := range []string{"k-1", "k-2"} {
		if _, err := keys.Add(t.Context(), keyadmin.AddRequest{By: by, Client: client, Kid: kid}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := keys.Retire(t.Context(), keyadmin.RetireRequest{By: by, Kid: "k-2"}); err != nil {
		t.Fatal(err)
	}
	sub, _ := failedDelivery(t, s.st)
	if _, err := s.st.PublishEvent(t.Context(), store.Event{ID: "e-pending", WorkspaceID: "acme", Type: "user.delete",
		Data: []byte(`{"n":2}`), CreatedAt: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	_, log := b.get("/webhooks/" + sub + "?status=pending")
	pending := find(t, log, `data-delivery="([^"]+)"`)

	for _, tc := range []struct {
		name, page, confirm, change string
		names, not                  []string
	}{
		{"disable", "/clients/" + client, "/clients/" + client + "/confirm?action=disable", "/clients/" + client + "/disable",
			[]string{"k-1", "stop"}, []string{"k-2"}},
		{"delete", "/webhooks/" + sub, "/webhooks/" + sub + "/confirm?action=delete", "/webhooks/" + sub + "/delete",
			[]string{pending, "1 delivery", "dropped"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, page := b.get(tc.page)
			if strings.Contains(page, `action="`+tc.change+`"`) || !strings.Contains(page, `href="`+htmlAttr(tc.confirm)+`"`) {
				t.Fatalf("%s posts to %s at once, or links to no confirmation:\n%s", tc.page, tc.change, page)
			}
			status, confirm := b.get(tc.confirm)
			form := regexp.MustCompile(`(?s)<form method="post" action="` + regexp.QuoteMeta(tc.change) + `".*?</form>`).FindString(confirm)
			if status != http.StatusOK || form == "" || !strings.Contains(form, `name="once"`) || !strings.Contains(form, `id="confirm"`) {
				t.Fatalf("the confirmation: %d, with no form that posts to %s:\n%s", status, tc.change, confirm)
			}
			for _, n := range tc.names {
				if !strings.Contains(confirm, n) {
					t.Errorf("the confirmation names no %q:\n%s", n, confirm)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(confirm, n) {
					t.Errorf("the confirmation names %q, which the change does not touch", n)
				}
			}
		})
	}
	if status, _ := b.get("/webhooks/" + sub + "/confirm?action=nuke"); status != http.StatusBadRequest {
		t.Fatalf("an unknown confirmation of a subscription: %d, want 400", status)
	}
}

// htmlAttr is s as html/template writes it in an attribute.
func htmlAttr(s string) string { return strings.ReplaceAll(s, "&", "&amp;") }
