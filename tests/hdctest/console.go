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
// confirmation, and finds each change in the audit search by her name,
// once. She reloads each change's result page: the reload makes no
// change, and a secret's page does not show the secret again. Every page
// passes Browser.Check; with shots, their screenshots are written. It
// returns the client's id.
func ConsoleTasks(t *testing.T, b *Browser, s *Stack, workspace string, shots bool) string {
	t.Helper()
	ct := consoleTasks{t: t, b: b, s: s, shots: shots}
	c := ct.createClient(workspace)
	ct.addKey(c, "k-old")
	s.WaitForKey(c.Kid)
	tk := s.Login(c, true, "")
	if status := s.EncryptedStatus(c, tk); status != 200 {
		t.Fatalf("a request under %s through the edge: %d", c.Kid, status)
	}
	newKid := ct.rotate(c)
	ct.retire(c)
	b.Open("/webhooks")
	b.Check(ct.shot("webhooks"))
	ct.audit(ConsoleOperator+" created the client "+c.ID+" in "+workspace, ConsoleOperator+" added the key k-old of the client "+c.ID,
		ConsoleOperator+" rotated the key of the client "+c.ID+" to "+newKid+", retiring k-old", ConsoleOperator+" retired the key k-old of the client "+c.ID)
	b.Open("/audit/verify")
	b.Check(ct.shot("verify"))
	return c.ID
}

// consoleTasks are the steps of ConsoleTasks.
type consoleTasks struct {
	t     *testing.T
	b     *Browser
	s     *Stack
	shots bool
}

// shot is name when the tasks write screenshots, else "".
func (ct consoleTasks) shot(name string) string {
	if ct.shots {
		return name
	}
	return ""
}

// createClient creates a client in workspace and reads its secret.
func (ct consoleTasks) createClient(workspace string) *APIClient {
	b := ct.b
	b.Open("/clients")
	b.Run(chromedp.SendKeys(chromedp.CSS("#new-workspace"), workspace), chromedp.Click(chromedp.CSS("#create-client")),
		chromedp.WaitVisible(chromedp.CSS("#new-client")))
	c := &APIClient{ID: b.Text("#new-client"), Secret: b.Text("#secret"), Workspace: workspace}
	ct.s.Creds.Add("the console's client secret", c.Secret)
	b.Check(ct.shot("client-created"))
	ct.reloadSecret("#new-client", c.ID)
	b.Open("/clients?workspace=" + workspace)
	if n := b.Count(`table tbody a[href^="/clients/"]`); n != 1 {
		ct.t.Fatalf("%d clients in %s after the creation's page was reloaded, want 1", n, workspace)
	}
	return c
}

// reloadSecret reloads the page of a new secret: it names the same
// result (the element sel shows want) without the secret.
func (ct consoleTasks) reloadSecret(sel, want string) {
	b := ct.b
	b.Reload()
	if b.Count("#secret, #printed") != 0 || b.Count("#shown") != 1 || b.Text(sel) != want {
		ct.t.Fatalf("the page of %s reloaded: the secret again, or not the same result: %s", want, b.Text("main"))
	}
	b.Check("")
}

// keys returns how many keys the client's page lists.
func (ct consoleTasks) keys(c *APIClient) int {
	ct.b.Open("/clients/" + c.ID)
	return ct.b.Count("#keys tbody tr[data-kid]")
}

// addKey adds the key kid for c and reads its secret and its JWK.
func (ct consoleTasks) addKey(c *APIClient, kid string) {
	b := ct.b
	b.Open("/clients/" + c.ID)
	b.Run(chromedp.SendKeys(chromedp.CSS("#add-kid"), kid), chromedp.Click(chromedp.CSS("#add-key")),
		chromedp.WaitVisible(chromedp.CSS("#printed")))
	c.Kid, c.Key = b.Text("#kid"), b.Text("#secret")
	ct.s.Creds.Add("the console's key", c.Key)
	if printed := b.Text("#printed"); c.Kid != kid || !strings.Contains(printed, `"jwk"`) || !strings.Contains(printed, c.Key) {
		ct.t.Fatalf("the new key %s as hdc keys add prints it: %s", c.Kid, printed)
	}
	b.Check(ct.shot("key-added"))
	ct.reloadSecret("#kid", kid)
	if n := ct.keys(c); n != 1 {
		ct.t.Fatalf("%d keys after the new key's page was reloaded, want 1", n)
	}
}

// rotate rotates c's keys after the confirmation and returns the new kid.
func (ct consoleTasks) rotate(c *APIClient) string {
	b := ct.b
	b.Open("/clients/" + c.ID)
	b.Run(chromedp.Click(chromedp.CSS("#rotate")), chromedp.WaitVisible(chromedp.CSS("#confirm")))
	b.Check(ct.shot("rotate-confirm"))
	b.Run(chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#printed")))
	newKid := b.Text("#kid")
	ct.s.Creds.Add("the console's rotated key", b.Text("#secret"))
	if newKid == c.Kid {
		ct.t.Fatal("the rotation shows the old key")
	}
	ct.reloadSecret("#kid", newKid)
	if n := ct.keys(c); n != 2 {
		ct.t.Fatalf("%d keys after the rotation's page was reloaded, want 2", n)
	}
	return newKid
}

// retire retires c's old key once its confirmation shows the key's last
// use through the edge.
func (ct consoleTasks) retire(c *APIClient) {
	b := ct.b
	testkit.Eventually(ct.t, time.Minute, c.Kid+"'s last use on the retirement's confirmation", func() bool {
		b.Open("/clients/" + c.ID + "/confirm?action=retire&kid=" + c.Kid)
		return b.Text("#confirm-keys .last-use") != "never"
	})
	b.Check(ct.shot("retire-confirm"))
	b.Run(chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#keys")))
	if status := b.Text(`#keys tr[data-kid="` + c.Kid + `"] .status`); status != "retired" {
		ct.t.Fatalf("%s after the retirement: %q", c.Kid, status)
	}
	b.Check(ct.shot("client"))
	b.Reload()
	if status := b.Text(`#keys tr[data-kid="` + c.Kid + `"] .status`); status != "retired" {
		ct.t.Fatalf("%s after the retirement's page was reloaded: %q", c.Kid, status)
	}
}

// audit searches the audit trail by the operator's name and finds each
// sentence of want once.
func (ct consoleTasks) audit(want ...string) {
	ct.b.Open("/audit?agent=" + ConsoleOperator)
	ConsoleAudit(ct.t, ct.b, want...)
	ct.b.Check(ct.shot("audit"))
}

// ConsoleAudit finds each sentence of want once in the audit search b
// shows.
func ConsoleAudit(t *testing.T, b *Browser, want ...string) {
	t.Helper()
	events := b.Text("#events")
	for _, w := range want {
		if n := strings.Count(events, w); n != 1 {
			t.Errorf("the audit search shows %q %d times, want once:\n%s", w, n, events)
		}
	}
}
