package e2e

import (
	"encoding/json"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestAuditEventsE2E: through the real edge and backend, a client's login
// (encrypted), upload, retrieve and a subscription created and deleted
// each leave their record in the workspace's trail, with the source the
// edge saw, the kid of the encrypted request and the request id the
// client was answered with, which the edge and the backend logged; the
// chain verifies (hdc audit verify) and no record holds a credential.
func TestAuditEventsE2E(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	c := s.NewClient("audit-e2e")
	file := []byte("an audited consultation")
	requestIDs := map[audit.Action][]string{}
	note := func(a audit.Action, r *hdctest.Response) {
		requestIDs[a] = append(requestIDs[a], r.Header.Get("X-Request-Id"))
	}

	login, _ := json.Marshal(map[string]string{"client_id": c.ID, "client_secret": c.Secret})
	r := s.Send(c, true, "POST", hdctest.LoginPath, login, nil)
	if r.Status != 200 {
		t.Fatalf("login: %s", r)
	}
	note(audit.Login, r)
	var tk hdctest.Tokens
	if err := json.Unmarshal(r.Body, &tk); err != nil || tk.AccessToken == "" {
		t.Fatalf("login answered %s", r)
	}
	cc := s.Upload(c, tk, false, file, "")
	r = s.Send(c, true, "GET", hdctest.RetrievePath+"?identifier="+url.QueryEscape(cc), nil, hdctest.Bearer(tk))
	hdctest.CheckRecord(t, r, file)
	note(audit.RecordRetrieve, r)
	r = s.Send(c, false, "POST", hdctest.SubsPath, []byte(`{"endpoint":"https://hooks.example.com/audit","signing_key":"whsec-audit-e2e-0123456789"}`), hdctest.Bearer(tk))
	if r.Status != 200 {
		t.Fatalf("register: %s", r)
	}
	note(audit.SubscriptionCreate, r)
	subID, _ := r.JSON(t)["id"].(string)
	r = s.Send(c, false, "DELETE", hdctest.SubsPath+"/"+subID, nil, hdctest.Bearer(tk))
	if r.Status != 204 {
		t.Fatalf("delete: %s", r)
	}
	note(audit.SubscriptionDelete, r)

	rs := s.AuditTrail(c.Workspace)
	var actions []audit.Action
	for _, rec := range rs {
		actions = append(actions, rec.Action)
	}
	want := []audit.Action{audit.Login, audit.RecordUpload, audit.RecordRetrieve, audit.SubscriptionCreate, audit.SubscriptionDelete}
	// The operator's actions (client created, key added) may come first.
	if len(actions) < len(want) || !slices.Equal(actions[len(actions)-len(want):], want) {
		t.Fatalf("trail of %s = %v, want it to end with %v", c.Workspace, actions, want)
	}
	byAction := map[audit.Action]audit.Record{}
	for _, rec := range rs[len(rs)-len(want):] {
		byAction[rec.Action] = rec
		if rec.Client != c.ID || rec.Workspace != c.Workspace || rec.Outcome != audit.Success ||
			rec.Source != netip.MustParseAddr("127.0.0.1") || rec.Request == "" {
			t.Errorf("record %+v: want client %s, workspace, success, the edge's source and a request id", rec.Event, c.ID)
		}
		if ids := requestIDs[rec.Action]; rec.Action != audit.RecordUpload && (len(ids) != 1 || ids[0] != rec.Request) {
			t.Errorf("%s record's request %s, the answer said %s", rec.Action, rec.Request, ids[0])
		}
		testkit.Eventually(t, 5*time.Second, "the request id of "+string(rec.Action)+" in both logs", func() bool {
			return strings.Contains(s.Output("hdc-edge"), `"uuid":"`+rec.Request+`"`) &&
				strings.Contains(s.Output("hdc-backend"), `"request_id":"`+rec.Request+`"`)
		})
		s.Creds.ScanRecord(t, "the audit record "+string(rec.Action), string(rec.Canonical()))
		if strings.Contains(string(rec.Canonical()), "whsec-") {
			t.Errorf("record %s holds the signing key", rec.Canonical())
		}
	}
	if byAction[audit.Login].Kid != c.Kid || byAction[audit.RecordRetrieve].Kid != c.Kid || byAction[audit.RecordUpload].Kid != "" {
		t.Errorf("kids: login %q, retrieve %q, upload %q; want %q on the encrypted requests only",
			byAction[audit.Login].Kid, byAction[audit.RecordRetrieve].Kid, byAction[audit.RecordUpload].Kid, c.Kid)
	}
	care := audit.Entity{Kind: audit.EntityCareContext, ID: cc}
	sub := audit.Entity{Kind: audit.EntitySubscription, ID: subID}
	if byAction[audit.RecordUpload].Entity != care || byAction[audit.RecordRetrieve].Entity != care ||
		byAction[audit.SubscriptionCreate].Entity != sub || byAction[audit.SubscriptionDelete].Entity != sub {
		t.Errorf("entities: %+v", byAction)
	}

	s.VerifyAudit(t, nil, nil)
}
