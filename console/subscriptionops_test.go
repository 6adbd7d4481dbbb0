package console

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// TestEnableAndTestEvent: a disabled subscription's page offers Enable,
// which turns it back on (the page then shows it active and offers it no
// more); Send a test event goes through the API's sender once and shows
// how it went, the result reloaded sending nothing again; the audit
// search says both; the auditor's forms are refused; no subscription is a
// 404 problem page.
func TestEnableAndTestEvent(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	sub, _ := failedDelivery(t, s.st)
	if _, err := s.st.SetSubscriptionEnabled(t.Context(), "acme", sub, store.Enablement{At: time.Now(), Event: disableEvent(sub)}); err != nil {
		t.Fatal(err)
	}
	a := s.consoles[alice].signIn()
	s.consoles[bob].signIn()
	path := "/webhooks/" + sub
	_, body := a.get(path)
	if !strings.Contains(body, `id="subscription-status">disabled (client)`) || !strings.Contains(body, `id="enable-subscription"`) {
		t.Fatalf("the disabled subscription's page:\n%s", body)
	}
	for _, tc := range []struct {
		name, who, path string
		status          int
	}{
		{"the auditor's enabling", bob, path + "/enable", 403},
		{"the auditor's test event", bob, path + "/test", 403},
		{"no such subscription to enable", alice, "/webhooks/00000000-0000-4000-8000-000000000000/enable", 404},
		{"no such subscription to test", alice, "/webhooks/00000000-0000-4000-8000-000000000000/test", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.consoles[tc.who].submit(tc.path, nil); got.status != tc.status || !strings.Contains(got.body, `id="detail"`) {
				t.Fatalf("%d, want %d and a problem page:\n%s", got.status, tc.status, got.body)
			}
		})
	}
	if got := a.post(path+"/enable", formOf(t, body, path+"/enable")); got.status != http.StatusSeeOther || got.location != path {
		t.Fatalf("the enabling: %d to %q\n%s", got.status, got.location, got.body)
	}
	if _, body = a.get(path); !strings.Contains(body, `id="subscription-status">active<`) || strings.Contains(body, `id="enable-subscription"`) {
		t.Fatalf("the subscription after its enabling:\n%s", body)
	}
	tested := a.post(path+"/test", formOf(t, body, path+"/test"))
	for range 2 {
		page := a.follow(tested)
		if !strings.Contains(page.body, `id="tested-outcome">http_503<`) || !strings.Contains(page.body, `id="tested-event"><code>msg_test<`) {
			t.Fatalf("the test event's result:\n%s", page.body)
		}
	}
	if n := s.tester.sent.Load(); n != 1 {
		t.Fatalf("%d test events sent, want 1", n)
	}
	_, body = a.get("/audit?entity=" + url.QueryEscape(sub))
	for _, w := range []string{alice + " enabled the subscription " + sub, alice + " sent a test event to the subscription " + sub} {
		if !strings.Contains(html.UnescapeString(body), w) {
			t.Errorf("the audit search lacks %q", w)
		}
	}
}

// disableEvent is the record of the subscription sub's disabling by its
// client.
func disableEvent(sub string) audit.Event {
	return audit.Event{At: time.Now(), Action: audit.SubscriptionDisable, Outcome: audit.Success, Workspace: "acme",
		Entity: audit.Entity{Kind: audit.EntitySubscription, ID: sub}}
}
