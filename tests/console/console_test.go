package console

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// The people of the stack's certificates.
const (
	alice = "alice@example.org" // an operator
	bob   = "bob@example.org"   // an auditor
)

// TestConsole: alice, an operator, creates a client in her browser, adds
// a key and reads its secret, rotates it, retires the old key once a
// request through the edge shows its last use, and finds her changes in
// the audit search by her name; bob, an auditor, sees the same pages with
// nothing that changes anything. Every page passes axe-core with no
// serious or critical violation and shows no error in the browser's
// console; the pages' screenshots are docs/console's.
func TestConsole(t *testing.T) {
	s := hdctest.StartStack(t)
	for _, p := range []struct{ role, name string }{{"operator", alice}, {"auditor", bob}} {
		s.HDC(nil, "tls", "issue", "--role", p.role, "--name", p.name, "--dir", s.Hop)
	}
	b := newBrowser(t, startConsole(t, s, alice))
	b.check("fleet")
	if got := b.text("#me"); got != alice {
		t.Fatalf("the console signed in as %q", got)
	}

	b.open("/clients")
	b.run(chromedp.SendKeys(chromedp.CSS("#new-workspace"), "clinic-7"), chromedp.Click(chromedp.CSS("#create-client")),
		chromedp.WaitVisible(chromedp.CSS("#new-client")))
	c := &hdctest.APIClient{ID: b.text("#new-client"), Secret: b.text("#secret"), Workspace: "clinic-7"}
	s.Creds.Add("the console's client secret", c.Secret)
	b.check("client-created")

	b.open("/clients/" + c.ID)
	b.run(chromedp.SendKeys(chromedp.CSS("#add-kid"), "k-old"), chromedp.Click(chromedp.CSS("#add-key")),
		chromedp.WaitVisible(chromedp.CSS("#printed")))
	c.Kid, c.Key = b.text("#kid"), b.text("#secret")
	s.Creds.Add("the console's key", c.Key)
	if printed := b.text("#printed"); !strings.Contains(printed, `"jwk"`) || !strings.Contains(printed, c.Key) {
		t.Fatalf("the new key as hdc keys add prints it: %s", printed)
	}
	b.check("key-added")

	s.WaitForKey(c.Kid)
	tk := s.Login(c, true, "")
	if status := s.EncryptedStatus(c, tk); status != 200 {
		t.Fatalf("a request under k-old through the edge: %d", status)
	}

	b.open("/clients/" + c.ID)
	b.run(chromedp.Click(chromedp.CSS("#rotate")), chromedp.WaitVisible(chromedp.CSS("#confirm")))
	b.check("rotate-confirm")
	b.run(chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#printed")))
	newKid := b.text("#kid")
	s.Creds.Add("the console's rotated key", b.text("#secret"))
	if newKid == c.Kid {
		t.Fatal("the rotation shows the old key")
	}

	testkit.Eventually(t, time.Minute, "k-old's last use on the retirement's confirmation", func() bool {
		b.open("/clients/" + c.ID + "/confirm?action=retire&kid=" + c.Kid)
		return b.text("#confirm-keys .last-use") != "never"
	})
	b.check("retire-confirm")
	b.run(chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#keys")))
	if status := b.text(`#keys tr[data-kid="k-old"] .status`); status != "retired" {
		t.Fatalf("k-old after the retirement: %q", status)
	}
	b.check("client")

	b.open("/webhooks")
	b.check("webhooks")
	b.open("/audit?agent=" + alice)
	events := b.text("#events")
	for _, want := range []string{alice + " created the client " + c.ID + " in clinic-7", alice + " added the key k-old",
		alice + " rotated to the new key " + newKid + ", retiring k-old", alice + " retired the key k-old"} {
		if !strings.Contains(events, want) {
			t.Errorf("the audit search by %s shows no %q:\n%s", alice, want, events)
		}
	}
	b.check("audit")
	b.open("/audit/verify")
	b.check("verify")

	t.Run("auditor", func(t *testing.T) { auditor(t, s, c.ID) })
}

// auditor: bob's console shows every page, with no form that posts and no
// button but the copy buttons.
func auditor(t *testing.T, s *hdctest.Stack, client string) {
	b := newBrowser(t, startConsole(t, s, bob))
	for _, path := range []string{"/fleet", "/clients", "/clients/" + client, "/clients/" + client + "/confirm?action=rotate",
		"/webhooks", "/audit?agent=" + alice, "/audit/verify"} {
		b.open(path)
		if got := b.changes(); len(got) != 0 {
			t.Errorf("%s shows the auditor changes: %v", path, got)
		}
		name := ""
		if path == "/clients/"+client {
			name = "client-auditor"
		}
		b.check(name)
	}
}
