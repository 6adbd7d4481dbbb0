package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	_ "modernc.org/sqlite" // the driver the backend's SQLite store uses

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestAuditOperationsLogins: a login refused for a wrong secret is
// recorded as denied in the trail of the client's workspace when the
// client id is a known client's, and in the installation's trail without
// a client when it is not (backend/auth.Service.auditRefusal); a refresh
// through the edge, and the reuse of the rotated refresh token (which
// revokes the family), are recorded for their client, with the grant
// when the login was made with a sharing key, in the workspace acted in.
func TestAuditOperationsLogins(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	c, other := s.NewClient("audit-ops-login"), s.NewClient("audit-ops-owner")
	known := s.FailLogin(t, c, c.ID)
	stranger := s.FailLogin(t, c, uuid.NewString())

	tk := s.Login(c, false, "")
	r := s.Refresh(c, tk)
	if r.Status != 200 {
		t.Fatalf("refresh: %s", r)
	}
	rotated := hdctest.RequestID(t, r)
	r = s.Refresh(c, tk) // the rotated token again
	hdctest.ExpectProblem(t, r, 401, "invalid_refresh_token")
	reused := hdctest.RequestID(t, r)

	var grant struct {
		GrantID    string `json:"grant_id"`
		SharingKey string `json:"sharing_key"`
	}
	s.HDC(&grant, "sharing", "grant", "--workspace", other.Workspace, "--client", c.ID)
	r = s.Refresh(c, s.Login(c, false, grant.SharingKey))
	if r.Status != 200 {
		t.Fatalf("refresh of the shared login: %s", r)
	}
	shared := hdctest.RequestID(t, r)

	checkAudit(t, s, []auditWant{
		{"login_failed/known client", c.Workspace, audit.LoginFailed, audit.Denied, c.ID, "", audit.Entity{}, known},
		{"login_failed/unknown client", "", audit.LoginFailed, audit.Denied, "", "", audit.Entity{}, stranger},
		{"refresh", c.Workspace, audit.Refresh, audit.Success, c.ID, "", audit.Entity{}, rotated},
		{"refresh_reuse", c.Workspace, audit.RefreshReuse, audit.Denied, c.ID, "", audit.Entity{}, reused},
		{"refresh/shared", other.Workspace, audit.Refresh, audit.Success, c.ID, grant.GrantID, audit.Entity{}, shared},
	})
}

// goneSubscriber is a webhook endpoint on loopback that answers every
// delivery 410 Gone, counting them.
func goneSubscriber(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusGone)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TestAuditOperationsParserAndDelivery: a parser's results for a record,
// posted on the backend's internal listener, are recorded in the
// record's workspace without a client, with the parser's address and
// request id; a subscriber that answers 410 Gone has its subscription
// disabled by the backend, which records that in the subscription's
// workspace without a client, source or request.
func TestAuditOperationsParserAndDelivery(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t, "HDC_WEBHOOK_ALLOW_NETS=127.0.0.0/8", "HDC_WEBHOOK_POLL_INTERVAL=100ms")
	c := s.NewClient("audit-ops-parser")
	tk := s.Login(c, false, "")
	cc := s.Upload(c, tk, false, []byte("a consultation to parse"), "")
	parsed := s.SubmitResources(cc)

	srv, hits := goneSubscriber(t)
	r := s.Send(c, false, "POST", hdctest.SubsPath, []byte(`{"endpoint":"`+srv.URL+`/gone","protocol":"http"}`), hdctest.Bearer(tk))
	sub, _ := r.JSON(t)["id"].(string)
	if r.Status != 200 || sub == "" {
		t.Fatalf("register: %s", r)
	}
	s.HDC(nil, "events", "publish", "--workspace", c.Workspace, "--type", "appointment.created", "--data", `{"appointment_id":"a-1"}`)
	s.WaitFor("the subscription's disabling in the trail", func() bool {
		for _, rec := range s.StoredAudit(c.Workspace) {
			if rec.Action == audit.DeliveryDisabled {
				return true
			}
		}
		return false
	})
	if hits.Load() == 0 {
		t.Fatal("the subscription was disabled, but no delivery reached the subscriber")
	}
	if list := s.Send(c, false, "GET", hdctest.SubsPath, nil, hdctest.Bearer(tk)); !bytes.Contains(list.Body, []byte(`"disabled"`)) {
		t.Errorf("the subscription is not listed as disabled: %s", list)
	}

	checkAudit(t, s, []auditWant{
		{"resources_submit", c.Workspace, audit.ResourcesSubmit, audit.Success, "", "",
			audit.Entity{Kind: audit.EntityCareContext, ID: cc}, parsed},
		{"delivery_disabled", c.Workspace, audit.DeliveryDisabled, audit.Success, "", "",
			audit.Entity{Kind: audit.EntitySubscription, ID: sub}, ""},
	})
}

// TestAuditOperationsOperatorCommands: each of the operator's commands,
// run with the real hdc, leaves its record, without client, source or
// request, on the entity it concerns, in the trail of the workspace it
// concerns: the client's for clients and keys (the installation's for a
// key of a client the database does not know), the granted workspace's
// for sharing grants; and hdc audit export prints each of those trails as
// valid FHIR AuditEvents.
func TestAuditOperationsOperatorCommands(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	owner := s.NewClient("audit-ops-owner")
	var c struct {
		ClientID    string `json:"client_id"`
		WorkspaceID string `json:"workspace_id"`
	}
	s.HDC(&c, "clients", "create", "--workspace", "audit-ops-operator")
	var grant struct {
		GrantID string `json:"grant_id"`
	}
	s.HDC(&grant, "sharing", "grant", "--workspace", owner.Workspace, "--client", c.ClientID)
	s.HDC(nil, "sharing", "revoke", "--grant", grant.GrantID)
	var added, rotated, stray struct {
		Kid string `json:"kid"`
	}
	s.HDC(&added, "keys", "add", "--client", c.ClientID)
	s.HDC(&rotated, "keys", "rotate", "--client", c.ClientID)
	s.HDC(nil, "keys", "retire", "--kid", added.Kid)
	// A standalone edge's registry file may hold a key of a client the
	// database does not know.
	s.HDC(&stray, "keys", "add", "--client", uuid.NewString(), "--registry", filepath.Join(t.TempDir(), "keys.json"))
	s.HDC(nil, "clients", "disable", "--client", c.ClientID)
	if added.Kid == "" || rotated.Kid == "" || rotated.Kid == added.Kid {
		t.Fatalf("keys add made %q, keys rotate %q", added.Kid, rotated.Kid)
	}

	ws := c.WorkspaceID
	client := audit.Entity{Kind: audit.EntityClient, ID: c.ClientID}
	grantEntity := audit.Entity{Kind: audit.EntityGrant, ID: grant.GrantID}
	key := func(kid string) audit.Entity { return audit.Entity{Kind: audit.EntityKey, ID: kid} }
	checkAudit(t, s, []auditWant{
		{"client_create", ws, audit.ClientCreate, audit.Success, "", "", client, ""},
		{"sharing_grant", owner.Workspace, audit.SharingGrant, audit.Success, "", "", grantEntity, ""},
		{"sharing_revoke", owner.Workspace, audit.SharingRevoke, audit.Success, "", "", grantEntity, ""},
		{"key_add", ws, audit.KeyAdd, audit.Success, "", "", key(added.Kid), ""},
		{"key_rotate", ws, audit.KeyRotate, audit.Success, "", "", key(rotated.Kid), ""},
		{"key_retire", ws, audit.KeyRetire, audit.Success, "", "", key(added.Kid), ""},
		{"key_add/unknown client", "", audit.KeyAdd, audit.Success, "", "", key(stray.Kid), ""},
		{"client_disable", ws, audit.ClientDisable, audit.Success, "", "", client, ""},
	})
	for _, trail := range []string{ws, owner.Workspace, ""} {
		s.CheckAuditExport(t, trail)
	}
}

// TestAuditOperationsTampering: `hdc audit verify` passes the stack's
// untouched trails, live or copied, and fails on a copy of the database
// where a record's stored content was altered (naming the record after
// it, whose prev no longer matches) or a middle record was deleted
// (naming that record), with its workspace.
func TestAuditOperationsTampering(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	c := s.NewClient("audit-ops-tamper") // client_create, key_add
	tk := s.Login(c, false, "")
	s.Upload(c, tk, false, []byte("an audited consultation"), "")
	trail := s.AuditTrail(c.Workspace)
	if len(trail) != 4 || trail[1].Action != audit.KeyAdd || trail[2].Action != audit.Login {
		t.Fatalf("the trail of %s:\n%s want client_create, key_add, login, record_upload", c.Workspace, hdctest.AuditSummary(trail))
	}
	s.VerifyAudit(t, nil, nil)

	login, added := trail[2], trail[1]
	tests := []struct {
		name   string
		query  string // run on the copy
		args   []any
		broken *audit.Break
	}{
		{"untouched copy", "", nil, nil},
		{"login's source altered", `UPDATE audit_records SET body = replace(body, '"source":"127.0.0.1"', '"source":"192.0.2.7"')
			WHERE workspace_id = ? AND seq = ? AND body LIKE '%"source":"127.0.0.1"%'`, []any{c.Workspace, login.Seq},
			&audit.Break{Workspace: c.Workspace, Seq: login.Seq + 1,
				Reason: fmt.Sprintf("its prev is not the hash of record %d (one of them was altered)", login.Seq)}},
		{"key_add deleted", `DELETE FROM audit_records WHERE workspace_id = ? AND seq = ?`, []any{c.Workspace, added.Seq},
			&audit.Break{Workspace: c.Workspace, Seq: added.Seq,
				Reason: fmt.Sprintf("records %d to %d are missing", added.Seq, added.Seq)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := s.CopyDatabase(t, tt.query, tt.args...)
			s.VerifyAudit(t, []string{"--data", dir}, tt.broken)
		})
	}
}

// TestAuditRetentionE2E: a backend whose retention (HDC_AUDIT_RETENTION)
// is shorter than the age of a trail removes the expired records when it
// starts and records that it did: the trail then begins with a
// retention_prune record naming the records it removed and the hash of
// the last, and hdc audit verify still passes from that anchor.
func TestAuditRetentionE2E(t *testing.T) {
	t.Parallel()
	const ws = "audit-retention"
	dir := t.TempDir()
	// The operator's environment holds the backend's retention, which
	// hdc audit verify holds the prune records to.
	ops := &hdctest.Stack{T: t, Dir: dir, Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "HDC_DATA=" + dir, "HDC_AUDIT_RETENTION=1ms"}}
	hdctest.CreateWebhookClient(t, dir, ws)
	hdctest.CreateWebhookClient(t, dir, ws)
	old := ops.ListAudit(ws)
	if len(old) != 2 || old[0].Action != audit.ClientCreate || old[1].Action != audit.ClientCreate {
		t.Fatalf("the trail before the backend ran: %+v", old)
	}

	hdctest.StartWebhookBackend(t, dir, "HDC_AUDIT_RETENTION=1ms")
	var trail []hdctest.ListedRecord
	ops.WaitFor("the retention job's record", func() bool {
		trail = ops.ListAudit(ws)
		return len(trail) > 0 && trail[0].Action == audit.RetentionPrune
	})
	var pruned struct {
		Pruned struct {
			From, Through int64
			Last          string
		}
	}
	if err := json.Unmarshal([]byte(trail[0].Line), &pruned); err != nil {
		t.Fatal(err)
	}
	if p := pruned.Pruned; len(trail) != 1 || trail[0].Seq != 3 || p.From != 1 || p.Through != 2 || p.Last != old[1].Hash {
		t.Fatalf("after the retention job the trail is\n%s\nwant one record, seq 3, pruning 1 to 2 after %s", trail[0].Line, old[1].Hash)
	}
	ops.VerifyAudit(t, nil, nil)
}

// auditWant is an audit record a test expects in a workspace's trail.
type auditWant struct {
	name      string // of the subtest
	workspace string // whose trail holds the record; "" is the installation's
	action    audit.Action
	outcome   audit.Outcome
	client    string // the acting client; "" for none
	grant     string
	entity    audit.Entity
	// request is the id of the request that caused the record: the
	// X-Request-Id its answer carried, for a client's request through the
	// edge, or the X-Hdc-Request-Id a parser sent. A record with a request
	// has the source 127.0.0.1; one without (an operator's command, a job
	// of the backend) has neither.
	request string
}

// checkAudit checks each of wants against its workspace's trail (in a
// subtest each), then that `hdc audit verify` passes every trail.
func checkAudit(t *testing.T, s *hdctest.Stack, wants []auditWant) {
	t.Helper()
	trails := map[string][]audit.Record{}
	for _, w := range wants {
		if _, ok := trails[w.workspace]; !ok {
			trails[w.workspace] = s.AuditTrail(w.workspace)
		}
	}
	for _, w := range wants {
		t.Run(w.name, func(t *testing.T) { checkAuditRecord(t, trails[w.workspace], w) })
	}
	s.VerifyAudit(t, nil, nil)
}

// checkAuditRecord finds the one record of trail that is w's (its action,
// entity and request) and checks its other fields.
func checkAuditRecord(t *testing.T, trail []audit.Record, w auditWant) {
	t.Helper()
	var found []audit.Record
	for _, r := range trail {
		if r.Action == w.action && r.Entity == w.entity && r.Request == w.request {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d records of %s on %+v (request %q) in the trail of %q, want 1:\n%s",
			len(found), w.action, w.entity, w.request, w.workspace, hdctest.AuditSummary(trail))
	}
	r := found[0]
	var source netip.Addr
	if w.request != "" {
		source = netip.MustParseAddr("127.0.0.1")
	}
	if r.Workspace != w.workspace || r.Outcome != w.outcome || r.Client != w.client || r.Grant != w.grant ||
		r.Source != source || r.Kid != "" {
		t.Errorf("record %s, want workspace %q, outcome %s, client %q, grant %q, source %v and no kid",
			r.Canonical(), w.workspace, w.outcome, w.client, w.grant, source)
	}
}
