package hdctest

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/health-data-connect/hdc/internal/testkit"
)

// ConsoleOperator is the operator of ConsoleTasks' certificate.
const ConsoleOperator = "alice@example.org"

// ConsoleTasks runs an operator's tasks in the console b shows, as
// ConsoleOperator, with the stack s's edge: she creates a client in
// workspace, adds a key and reads its secret, rotates, retires the old key
// once a request through the edge shows its last use on the
// confirmation, and finds each change in the audit search by her name.
// Every page passes Browser.Check; with shots, their screenshots are
// written. It returns the client's id.
func ConsoleTasks(t *testing.T, b *Browser, s *Stack, workspace string, shots bool) string {
	t.Helper()
	shot := func(name string) string {
		if shots {
			return name
		}
		return ""
	}
	const alice = ConsoleOperator
	b.Open("/clients")
	b.Run(chromedp.SendKeys(chromedp.CSS("#new-workspace"), workspace), chromedp.Click(chromedp.CSS("#create-client")),
		chromedp.WaitVisible(chromedp.CSS("#new-client")))
	c := &APIClient{ID: b.Text("#new-client"), Secret: b.Text("#secret"), Workspace: workspace}
	s.Creds.Add("the console's client secret", c.Secret)
	b.Check(shot("client-created"))

	b.Open("/clients/" + c.ID)
	b.Run(chromedp.SendKeys(chromedp.CSS("#add-kid"), "k-old"), chromedp.Click(chromedp.CSS("#add-key")),
		chromedp.WaitVisible(chromedp.CSS("#printed")))
	c.Kid, c.Key = b.Text("#kid"), b.Text("#secret")
	s.Creds.Add("the console's key", c.Key)
	if printed := b.Text("#printed"); !strings.Contains(printed, `"jwk"`) || !strings.Contains(printed, c.Key) {
		t.Fatalf("the new key as hdc keys add prints it: %s", printed)
	}
	b.Check(shot("key-added"))

	s.WaitForKey(c.Kid)
	tk := s.Login(c, true, "")
	if status := s.EncryptedStatus(c, tk); status != 200 {
		t.Fatalf("a request under k-old through the edge: %d", status)
	}

	b.Open("/clients/" + c.ID)
	b.Run(chromedp.Click(chromedp.CSS("#rotate")), chromedp.WaitVisible(chromedp.CSS("#confirm")))
	b.Check(shot("rotate-confirm"))
	b.Run(chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#printed")))
	newKid := b.Text("#kid")
	s.Creds.Add("the console's rotated key", b.Text("#secret"))
	if newKid == c.Kid {
		t.Fatal("the rotation shows the old key")
	}

	testkit.Eventually(t, time.Minute, "k-old's last use on the retirement's confirmation", func() bool {
		b.Open("/clients/" + c.ID + "/confirm?action=retire&kid=" + c.Kid)
		return b.Text("#confirm-keys .last-use") != "never"
	})
	b.Check(shot("retire-confirm"))
	b.Run(chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#keys")))
	if status := b.Text(`#keys tr[data-kid="k-old"] .status`); status != "retired" {
		t.Fatalf("k-old after the retirement: %q", status)
	}
	b.Check(shot("client"))

	b.Open("/webhooks")
	b.Check(shot("webhooks"))
	b.Open("/audit?agent=" + alice)
	events := b.Text("#events")
	for _, want := range []string{alice + " created the client " + c.ID + " in " + workspace, alice + " added the key k-old",
		alice + " rotated to the new key " + newKid + ", retiring k-old", alice + " retired the key k-old"} {
		if !strings.Contains(events, want) {
			t.Errorf("the audit search by %s shows no %q:\n%s", alice, want, events)
		}
	}
	b.Check(shot("audit"))
	b.Open("/audit/verify")
	b.Check(shot("verify"))

	return c.ID
}
