package console

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/health-data-connect/hdc/internal/apiclient"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// limitsInConsole: alice sets a client's rate and quota on its page, which
// the operator's command line then reads back, and clears them from the
// confirmation that names them; the audit search says both.
func limitsInConsole(t *testing.T, b *hdctest.Browser, s *hdctest.Stack, client string) {
	b.Open("/clients/" + client)
	b.Run(chromedp.SetValue(chromedp.CSS("#rate-writes-per-second"), "100"), chromedp.SetValue(chromedp.CSS("#rate-writes-burst"), "20"),
		chromedp.SetValue(chromedp.CSS("#upload-quota"), "1048576"))
	b.Submit("#set-limits", "#clear-limits")
	if got := b.Text(`#limits tr[data-class="writes"] .rate`); got != "100 a second, burst 20" || !strings.Contains(b.Text("#quota"), "1048576 bytes") {
		t.Fatalf("the client's limits after the form: %q, %q", got, b.Text("#quota"))
	}
	b.Check("limits")
	var shown struct {
		Limits struct {
			Rates map[string]struct {
				PerSecond float64 `json:"per_second"`
				Burst     int
			}
			UploadBytesPerDay int64 `json:"upload_bytes_per_day"`
		}
	}
	s.HDC(&shown, "clients", "limits", "show", "--client", client, "--admin", s.Internal, "--cert", filepath.Join(s.Hop, alice+".pem"),
		"--key", filepath.Join(s.Hop, alice+"-key.pem"), "--ca", filepath.Join(s.Hop, "ca.pem"))
	if w := shown.Limits.Rates["writes"]; w.PerSecond != 100 || w.Burst != 20 || shown.Limits.UploadBytesPerDay != 1<<20 {
		t.Fatalf("hdc clients limits show after the console's form: %+v", shown)
	}
	b.Press("#clear-limits", "#consequence")
	if facts := b.Text("#confirm-facts"); !strings.Contains(facts, "100 a second, burst 20") || !strings.Contains(facts, "1048576 bytes") {
		t.Fatalf("the clearing's confirmation: %s", facts)
	}
	b.Check("")
	b.Press("#confirm", "#limits")
	if got := b.Text(`#limits tr[data-class="writes"] .rate`); got != "the edges' default" || b.Count("#clear-limits") != 0 {
		t.Fatalf("the client's limits after the clearing: %q", got)
	}
	b.Open("/audit?entity=" + client)
	hdctest.ConsoleAudit(t, b, alice+" set the limits of the client Clinic Seven", alice+" cleared the limits of the client Clinic Seven")
}

// sharingInConsole: alice lets a client of one workspace act in another
// from its page, and reads the sharing key once, with which the client
// logs in there through the edge; she revokes the grant from the sharing
// page after its confirmation, and the key logs in no more.
func sharingInConsole(t *testing.T, b *hdctest.Browser, s *hdctest.Stack) {
	c := s.NewClient("clinic-9")
	s.NewClient("clinic-8")
	b.Open("/clients/" + c.ID)
	b.Run(chromedp.SendKeys(chromedp.CSS("#grant-workspace"), "clinic-8"))
	b.Submit("#grant-sharing", "#grant-id")
	key, grant := b.Text("#secret"), b.Text("#grant-id")
	s.Creds.Add("the console's sharing key", key)
	b.Check("sharing-granted")
	s.Login(c, true, key)
	b.Open("/sharing?client=" + c.ID)
	b.Check("sharing")
	b.Submit(`#grants tr[data-grant="`+grant+`"] a.button`, "#consequence")
	b.Check("")
	b.Press("#confirm", "#client-grants")
	if b.Count(`#client-grants tr[data-grant="`+grant+`"] a.button`) != 0 {
		t.Fatalf("the grant after its revocation: %s", b.Text("#client-grants"))
	}
	login, _ := json.Marshal(map[string]string{"client_id": c.ID, "client_secret": c.Secret, "sharing_key": key})
	if r := s.Send(c, false, "POST", hdctest.LoginPath, login, nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("a login with the revoked sharing key: %s", r)
	}
}

// credentialsInConsole: alice creates a client with its first key and
// downloads its credentials file once; hdc call reads it and calls the API
// through the edge, encrypted; asked again, the file is gone.
func credentialsInConsole(t *testing.T, b *hdctest.Browser, s *hdctest.Stack) {
	b.Open("/clients")
	b.Run(chromedp.SendKeys(chromedp.CSS("#new-workspace"), "clinic-handover"), chromedp.SetValue(chromedp.CSS("#new-first-key"), "A256GCM"))
	b.Submit("#create-client", "#download-credentials")
	id, secret, key, kid := b.Text("#new-client"), b.Text("#secret"), b.Text("#key-secret"), b.Text("#kid")
	s.Creds.Add("the console's client secret", secret)
	s.Creds.Add("the console's key", key)
	b.Check("credentials")
	link := b.Attr("#download-credentials", "href")
	name, file := b.Download("#download-credentials")
	var c apiclient.Credentials
	if err := json.Unmarshal(file, &c); err != nil || name != "hdc-credentials-"+id+".json" || c.ClientID != id || c.ClientSecret != secret ||
		c.EncryptionKey != key || c.Kid != kid || c.Enc != "A256GCM" || c.BaseURL != s.Edge || c.JWK == nil {
		t.Fatalf("the credentials file %s: %v\n%s", name, err, file)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	s.WaitForKey(kid)
	home := t.TempDir()
	cmd := exec.Command(hdctest.Binary(t, "hdc"), "call", "--credentials", path, "--encrypt", "GET", hdctest.SubsPath)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, "cache")}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	var listed struct{ Subscriptions []any }
	if err := cmd.Run(); err != nil || json.Unmarshal(out.Bytes(), &listed) != nil || listed.Subscriptions == nil {
		t.Fatalf("hdc call with the console's file: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	b.Open(link)
	if status := b.Text("#detail"); !strings.Contains(status, "downloaded once already") {
		t.Fatalf("the file asked again: %s", b.Text("main"))
	}
	b.CheckProblem(http.StatusGone)
}

// serialOf returns the serial of the stack's certificate of name, as the
// people's page shows it.
func serialOf(t *testing.T, s *hdctest.Stack, name string) string {
	b, err := os.ReadFile(filepath.Join(s.Hop, name+".pem"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert.SerialNumber.Text(16)
}

// peopleInConsole: carol, an operator, signs in to a console of her own;
// alice finds her on the people's page, revokes her certificate from the
// confirmation, and carol's console gets the API's refusal from then on;
// alice's own certificate is the API's refusal, shown as its problem.
func peopleInConsole(t *testing.T, b *hdctest.Browser, s *hdctest.Stack) {
	const carol = "carol@example.org"
	s.HDC(nil, "tls", "issue", "--role", "operator", "--name", carol, "--dir", s.Hop)
	cb := hdctest.NewBrowser(t, hdctest.StartConsole(t, s, carol))
	serial := serialOf(t, s, carol)
	b.Open("/people")
	if row := b.Text(`#people tr[data-serial="` + serial + `"]`); !strings.Contains(row, carol) || !strings.Contains(row, "in use") {
		t.Fatalf("carol on the people's page: %q", row)
	}
	b.Check("people")
	b.Submit(`#people tr[data-serial="`+serial+`"] a.button`, "#consequence")
	b.Check("revoke-confirm")
	b.Press("#confirm", "#revocations")
	if row := b.Text(`#revocations tr[data-serial="` + serial + `"]`); !strings.Contains(row, carol) || !strings.Contains(row, alice) ||
		b.Text(`#people tr[data-serial="`+serial+`"] .status`) != "revoked" {
		t.Fatalf("carol's certificate after its revocation: %q", row)
	}
	testkit.Eventually(t, 10*time.Second, "carol's console refused", func() bool {
		cb.Open("/clients")
		return strings.Contains(cb.Text("main"), "revoked")
	})
	cb.CheckProblem(http.StatusForbidden)
	b.Open("/people/confirm?serial=" + serialOf(t, s, alice))
	b.Press("#confirm", "#detail")
	if got := b.Text("#detail"); !strings.Contains(got, "another operator revokes it") {
		t.Fatalf("alice revoking her own certificate: %s", got)
	}
	b.CheckProblem(http.StatusConflict)
}

// goodReceiver is a webhook receiver on loopback that answers 204, and
// counts the test events it gets.
type goodReceiver struct {
	srv   *httptest.Server
	tests atomic.Int64
}

func newGoodReceiver(t *testing.T) *goodReceiver {
	rc := &goodReceiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct{ Type string }
		if json.NewDecoder(r.Body).Decode(&ev) == nil && ev.Type == "webhook.test" && r.Header.Get("webhook-signature") != "" {
			rc.tests.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// enableAndTestInConsole: a client turns its subscription off; alice
// enables it from its page, sends it a test event, which the receiver
// gets signed, and reads how it went; the result reloaded sends nothing
// again; the audit search says both.
func enableAndTestInConsole(t *testing.T, b *hdctest.Browser, s *hdctest.Stack) {
	rc := newGoodReceiver(t)
	c, id := subscribe(t, s, "clinic-test", rc.srv.URL+"/hook")
	tk := s.Login(c, true, "")
	if r := s.Send(c, true, "PATCH", hdctest.SubsPath+"/"+id, []byte(`{"enabled":false}`), hdctest.Bearer(tk)); r.Status != http.StatusOK {
		t.Fatalf("the client's disabling: %s", r)
	}
	b.Open("/webhooks/" + id)
	if got := b.Text("#subscription-status"); got != "disabled (client)" {
		t.Fatalf("the subscription disabled by its client: %q", got)
	}
	b.Press("#enable-subscription", "#test-subscription")
	if got := b.Text("#subscription-status"); got != "active" || b.Count("#enable-subscription") != 0 {
		t.Fatalf("the subscription after its enabling: %q", got)
	}
	b.Check("")
	b.Press("#test-subscription", "#tested")
	if got := b.Text("#tested-outcome"); got != "delivered" || rc.tests.Load() != 1 {
		t.Fatalf("the test event: %q, %d received", got, rc.tests.Load())
	}
	b.Check("test-event")
	b.Reload()
	if got := b.Text("#tested-outcome"); got != "delivered" || rc.tests.Load() != 1 {
		t.Fatalf("the test event's result reloaded: %q, %d received", got, rc.tests.Load())
	}
	b.Open("/audit?entity=" + id)
	hdctest.ConsoleAudit(t, b, alice+" enabled the subscription "+id, alice+" sent a test event to the subscription "+id)
}

// exportInConsole: alice downloads the audit search's export, which is
// her changes as FHIR AuditEvent NDJSON.
func exportInConsole(t *testing.T, b *hdctest.Browser) {
	b.Open("/audit?agent=" + alice + "&action=client_create")
	name, data := b.Download("#export")
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if !regexp.MustCompile(`^hdc-audit-[0-9TZ]+\.ndjson$`).MatchString(name) || len(lines) < 2 {
		t.Fatalf("the export %s:\n%s", name, data)
	}
	for _, l := range lines {
		var ev struct {
			ResourceType string `json:"resourceType"`
			Extension    []struct{ ValueCode string }
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.ResourceType != "AuditEvent" || !strings.Contains(l, `"valueCode":"client_create"`) ||
			!strings.Contains(l, alice) {
			t.Fatalf("a line of the export: %v\n%s", err, l)
		}
	}
}

// destinationsInConsole: alice grants a workspace a private receiver from
// its page, reached from the workspaces' list, and revokes it from its
// confirmation; every client's keys are listed on their page.
func destinationsInConsole(t *testing.T, b *hdctest.Browser, workspace string) {
	b.Open("/workspaces")
	b.Check("workspaces")
	b.Submit(`#workspaces a[href="/workspaces/`+workspace+`"]`, "#destinations")
	b.Run(chromedp.SendKeys(chromedp.CSS("#dest-prefix"), "10.0.0.31"), chromedp.SendKeys(chromedp.CSS("#dest-port"), "9999"))
	b.Submit("#grant-destination", "#destinations")
	if row := b.Text("#destinations tbody"); !strings.Contains(row, "10.0.0.31/32") || !strings.Contains(row, "in force") {
		t.Fatalf("the receiver granted: %s", row)
	}
	b.Check("workspace")
	b.Submit("#destinations a.button", "#consequence")
	b.Check("")
	b.Press("#confirm", "#destinations")
	if row := b.Text("#destinations tbody"); !strings.Contains(row, "by "+alice) || b.Count("#destinations a.button") != 0 {
		t.Fatalf("the receiver revoked: %s", row)
	}
	b.Open("/keys?workspace=" + workspace)
	if n := b.Count("#all-keys tbody tr[data-kid]"); n != 2 {
		t.Fatalf("%d keys of %s, want the rotated pair", n, workspace)
	}
	b.Check("keys")
}
