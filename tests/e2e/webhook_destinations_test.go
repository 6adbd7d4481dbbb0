package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// destinationGrant is a grant as hdc subscriptions destinations prints it.
type destinationGrant struct {
	ID          string  `json:"id"`
	WorkspaceID string  `json:"workspace_id"`
	Prefix      string  `json:"prefix"`
	Port        int     `json:"port"`
	CreatedBy   string  `json:"created_by"`
	RevokedAt   *string `json:"revoked_at"`
}

// TestWebhookDestinationGrants (fifth review, finding 1): a backend with no
// process-wide allow-list refuses a private receiver until an operator
// grants it to one workspace, through the Admin API (hdc subscriptions
// destinations grant, audited under the operator's name); then that
// workspace's subscription is delivered to it, its log keeping the status
// and never the answer, while another workspace still cannot register it,
// nor the granting workspace another port of it. A revocation (here in
// direct mode, as another backend would learn it from the database)
// refuses the next deliveries within the snapshot's bound.
func TestWebhookDestinationGrants(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t, "HDC_WEBHOOK_POLL_INTERVAL=100ms")
	a, b := s.NewClient("dest-a"), s.NewClient("dest-b")
	ta, tb := s.Login(a, false, ""), s.Login(b, false, "")
	svc := internalService(t, http.StatusOK)
	port := svc.URL[strings.LastIndex(svc.URL, ":")+1:]
	endpoint := `{"endpoint":"` + svc.URL + `/hook","event_names":["appointment.created"]}`
	register := func(c *hdctest.APIClient, tk hdctest.Tokens, body string) *hdctest.Response {
		return s.Send(c, false, "POST", hdctest.SubsPath, []byte(body), hdctest.Bearer(tk))
	}
	hdctest.ExpectProblem(t, register(a, ta, endpoint), 400, "endpoint_not_allowed")

	// An operator with a certificate of her own, through the Admin API.
	s.HDC(nil, "tls", "issue", "--role", string(pki.Operator), "--name", "alice@example.org", "--dir", s.Hop)
	s.Creds.NotePEMFile(t, "a private key of the hop", filepath.Join(s.Hop, "alice@example.org-key.pem"))
	asAlice := []string{"--admin", s.Internal, "--cert", filepath.Join(s.Hop, "alice@example.org.pem"),
		"--key", filepath.Join(s.Hop, "alice@example.org-key.pem"), "--ca", filepath.Join(s.Hop, pki.CAFile)}
	var g destinationGrant
	s.HDC(&g, append([]string{"subscriptions", "destinations", "grant", "--workspace", a.Workspace,
		"--destination", "127.0.0.1:" + port}, asAlice...)...)
	if g.ID == "" || g.WorkspaceID != a.Workspace || g.Prefix != "127.0.0.1/32" || g.CreatedBy != "alice@example.org" {
		t.Fatalf("the grant: %+v", g)
	}
	reg := register(a, ta, endpoint)
	if reg.Status != 200 {
		t.Fatalf("registering the granted receiver: %s", reg)
	}
	id, _ := reg.JSON(t)["id"].(string)
	hdctest.ExpectProblem(t, register(b, tb, endpoint), 400, "endpoint_not_allowed")
	other := `{"endpoint":"http://127.0.0.1:` + testkit.FreeAddr(t)[len("127.0.0.1:"):] + `/hook"}`
	hdctest.ExpectProblem(t, register(a, ta, other), 400, "endpoint_not_allowed")

	publish := func() {
		s.HDC(nil, "events", "publish", "--workspace", a.Workspace, "--type", "appointment.created", "--data", `{"appointment_id":"a-1"}`)
	}
	// lastAttempt reads the newest delivery's last attempt, if any.
	lastAttempt := func() (attemptView, bool) {
		var page struct{ Deliveries []struct{ ID string } }
		r := s.Send(a, false, "GET", hdctest.SubsPath+"/"+id+"/deliveries", nil, hdctest.Bearer(ta))
		if json.Unmarshal(r.Body, &page) != nil || len(page.Deliveries) == 0 {
			return attemptView{}, false
		}
		var d struct {
			AttemptList []attemptView `json:"attempt_list"`
		}
		r = s.Send(a, false, "GET", hdctest.SubsPath+"/"+id+"/deliveries/"+page.Deliveries[0].ID, nil, hdctest.Bearer(ta))
		if json.Unmarshal(r.Body, &d) != nil || len(d.AttemptList) == 0 {
			return attemptView{}, false
		}
		return d.AttemptList[len(d.AttemptList)-1], true
	}
	publish()
	var first attemptView
	testkit.Eventually(t, 30*time.Second, "the granted receiver's delivery", func() bool {
		var ok bool
		first, ok = lastAttempt()
		return ok
	})
	if first.Outcome != "delivered" || first.StatusCode == nil || *first.StatusCode != 200 || first.ResponseBody != nil {
		t.Fatalf("the attempt at the granted receiver: %+v", first)
	}

	var listed []destinationGrant
	s.HDC(&listed, append([]string{"subscriptions", "destinations", "list", "--workspace", a.Workspace}, asAlice...)...)
	if len(listed) != 1 || listed[0].ID != g.ID || listed[0].Port == 0 {
		t.Fatalf("the workspace's grants: %+v", listed)
	}
	trail, _, err := s.HDCRun("audit", "list", "--workspace", a.Workspace, "--entity", g.ID)
	if err != nil || !strings.Contains(trail, "webhook_destination_grant") || !strings.Contains(trail, "alice@example.org") {
		t.Fatalf("the grant's audit record: %v\n%s", err, trail)
	}

	// Revoked in the database, as another backend's Admin API would: the
	// backend reads the grants again within its bound.
	var revoked destinationGrant
	s.HDC(&revoked, "subscriptions", "destinations", "revoke", "--workspace", a.Workspace, "--grant", g.ID)
	if revoked.RevokedAt == nil {
		t.Fatalf("the revoked grant: %+v", revoked)
	}
	since := time.Now()
	testkit.Eventually(t, 20*time.Second, "a delivery refused after the revocation", func() bool {
		publish()
		var last attemptView
		testkit.Eventually(t, 10*time.Second, "the newest delivery's attempt", func() bool {
			var ok bool
			last, ok = lastAttempt()
			return ok
		})
		return last.Outcome == "address_refused"
	})
	t.Logf("the revocation refused deliveries %v after it was made in the database", time.Since(since).Round(time.Millisecond))
	hdctest.ExpectProblem(t, register(a, ta, `{"endpoint":"`+svc.URL+`/again"}`), 400, "endpoint_not_allowed")
}
