package console

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

// The people of the stack's certificates.
const (
	alice = hdctest.ConsoleOperator
	bob   = "bob@example.org" // an auditor
)

// TestConsole: alice, an operator, creates a client in her browser, adds
// a key and reads its secret, rotates it, retires the old key once a
// request through the edge shows its last use, and finds her changes in
// the audit search by her name, reloading each change's result page
// (hdctest.ConsoleTasks); she sets and clears the client's limits
// (limitsInConsole) and disables it at the keyboard after a confirmation
// that names its key (disableInConsole); she grants and revokes sharing
// (sharingInConsole), grants and revokes a private webhook receiver and
// lists the keys (destinationsInConsole), hands a new client over in a
// credentials file that hdc call reads (credentialsInConsole), revokes
// another operator's certificate from the people's page
// (peopleInConsole); she watches a
// failing receiver's delivery given up and recovers it
// (recoverInConsole), enables a subscription and sends it a test event
// (enableAndTestInConsole), deletes a subscription after a confirmation
// that names its pending delivery (deleteInConsole) and downloads the
// audit export (exportInConsole); bob, an auditor, sees the same pages
// with nothing that changes anything. Every page passes axe-core with no
// serious or critical violation and shows no error in the browser's
// console; the pages' screenshots are docs/console's (-update writes
// them).
func TestConsole(t *testing.T) {
	s := hdctest.StartStack(t, webhookEnv...)
	for _, p := range []struct{ role, name string }{{"operator", alice}, {"auditor", bob}} {
		s.HDC(nil, "tls", "issue", "--role", p.role, "--name", p.name, "--dir", s.Hop)
	}
	b := hdctest.NewBrowser(t, hdctest.StartConsole(t, s, alice, "--base-url", s.Edge))
	b.Check("fleet")
	if got := b.Text("#me"); got != alice {
		t.Fatalf("the console signed in as %q", got)
	}

	client := hdctest.ConsoleTasks(t, b, s, "clinic-7", true)
	nameInConsole(t, b, client)
	limitsInConsole(t, b, s, client)
	disableInConsole(t, b, client)
	sharingInConsole(t, b, s)
	destinationsInConsole(t, b, "clinic-7")
	credentialsInConsole(t, b, s)
	peopleInConsole(t, b, s)
	sub := recoverInConsole(t, b, s)
	enableAndTestInConsole(t, b, s)
	deleteInConsole(t, b, s)
	exportInConsole(t, b)
	t.Run("auditor", func(t *testing.T) { auditor(t, s, client, sub) })
}

// nameInConsole: alice names the client and labels it on its page, finds
// it on the clients page by the start of its name and by its label, and
// the audit search says what she changed, naming the client by its name.
func nameInConsole(t *testing.T, b *hdctest.Browser, client string) {
	b.Open("/clients/" + client)
	b.Run(chromedp.SetValue(chromedp.CSS("#edit-name"), "Clinic Seven"), chromedp.SetValue(chromedp.CSS("#edit-labels"), "env=prod"))
	b.Submit("#update-client", "#client-name")
	if name, labels := b.Text("#client-name"), b.Text("#client-labels"); name != "Clinic Seven" || labels != "env=prod" {
		t.Fatalf("the client after its edit: %q, %q", name, labels)
	}
	b.Open("/clients?name_prefix=clinic+s&labels=env%3Dprod")
	b.Check("")
	if rows := b.Text("tbody"); !strings.Contains(rows, "Clinic Seven") || !strings.Contains(rows, client) {
		t.Fatalf("the search by name and label: %s", rows)
	}
	b.Open("/audit?entity=" + client)
	hdctest.ConsoleAudit(t, b, alice+" changed the client Clinic Seven: name set to Clinic Seven, label env set to prod")
}

// disableInConsole: alice disables the client at the keyboard, after a
// confirmation that names its active key, which stops working; the
// client's page, reloaded, shows it disabled, and the trail holds one
// disabling.
func disableInConsole(t *testing.T, b *hdctest.Browser, client string) {
	b.Open("/clients/" + client)
	b.Press("#disable-client", "#consequence")
	if keys := b.Text("#confirm-keys tbody"); !strings.Contains(keys, "active") || !strings.Contains(b.Text("#consequence"), "stop opening requests") {
		t.Fatalf("the disabling's confirmation names no active key: %s", b.Text("main"))
	}
	b.Check("disable-confirm")
	b.Press("#confirm", "#client-id")
	for range 2 {
		if status := b.Text("#client-status"); status != "disabled" {
			t.Fatalf("the client after its disabling: %q", status)
		}
		b.Check("")
		b.Reload()
	}
	b.Open("/audit?agent=" + alice)
	hdctest.ConsoleAudit(t, b, alice+" disabled the client Clinic Seven")
}

// auditor: bob's console shows every page, with no form that posts and no
// button but the copy buttons.
func auditor(t *testing.T, s *hdctest.Stack, client, sub string) {
	b := hdctest.NewBrowser(t, hdctest.StartConsole(t, s, bob))
	for _, path := range []string{"/fleet", "/clients", "/clients/" + client, "/clients/" + client + "/confirm?action=rotate",
		"/clients/" + client + "/confirm?action=disable", "/webhooks", "/webhooks/" + sub, "/webhooks/" + sub + "/confirm?action=delete",
		"/audit?agent=" + alice, "/audit/verify", "/keys", "/sharing", "/workspaces", "/workspaces/clinic-7", "/people",
		"/people/confirm?serial=0a"} {
		b.Open(path)
		if got := b.Changes(); len(got) != 0 {
			t.Errorf("%s shows the auditor changes: %v", path, got)
		}
		name := ""
		if path == "/clients/"+client {
			name = "client-auditor"
		}
		b.Check(name)
	}
}
