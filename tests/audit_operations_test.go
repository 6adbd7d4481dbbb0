package tests

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	_ "modernc.org/sqlite" // the driver the backend's SQLite store uses

	"github.com/health-data-connect/hdc/backend"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/pki"
)

// The audit trail of the operations the client-event test
// (TestAuditEventsE2E) does not cover: refused and rotated logins, a
// parser's results, a subscriber gone for good, and the operator's
// commands. Every trail is read both from the backend's database and with
// the real `hdc audit list`, and must verify with the real `hdc audit
// verify`.

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

// storedAudit returns the trail of workspace as the backend's store reads
// it.
func (s *stack) storedAudit(workspace string) []audit.Record {
	s.t.Helper()
	ctx := context.Background()
	st, err := backend.OpenExistingStore(ctx, "", filepath.Join(s.dir, "backend"))
	if err != nil {
		s.t.Fatal(err)
	}
	defer st.Close()
	rs, err := st.ListAudit(ctx, store.AuditFilter{Workspace: workspace})
	if err != nil {
		s.t.Fatalf("the trail of %q: %v", workspace, err)
	}
	return rs
}

// auditTrail returns the trail of workspace from the backend's store,
// checking that `hdc audit list --workspace` prints exactly those records.
func (s *stack) auditTrail(workspace string) []audit.Record {
	s.t.Helper()
	stored, listed := s.storedAudit(workspace), s.listAudit(workspace)
	if len(listed) != len(stored) {
		s.t.Fatalf("hdc audit list --workspace %q printed %d records, the store holds %d", workspace, len(listed), len(stored))
	}
	for i, l := range listed {
		if want := string(stored[i].Canonical()); l.canonical != want {
			s.t.Errorf("hdc audit list printed\n%s\nfor the stored record\n%s", l.line, want)
		}
	}
	return stored
}

// checkAudit checks each of wants against its workspace's trail (in a
// subtest each), then that `hdc audit verify` passes every trail.
func (s *stack) checkAudit(t *testing.T, wants []auditWant) {
	t.Helper()
	trails := map[string][]audit.Record{}
	for _, w := range wants {
		if _, ok := trails[w.workspace]; !ok {
			trails[w.workspace] = s.auditTrail(w.workspace)
		}
	}
	for _, w := range wants {
		t.Run(w.name, func(t *testing.T) { checkAuditRecord(t, trails[w.workspace], w) })
	}
	s.verifyAudit(t, nil, nil)
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
			len(found), w.action, w.entity, w.request, w.workspace, auditSummary(trail))
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

// auditSummary is a trail as a failure shows it.
func auditSummary(trail []audit.Record) string {
	var b strings.Builder
	for _, r := range trail {
		fmt.Fprintf(&b, "  %d %s %s %s:%s request %q\n", r.Seq, r.Action, r.Outcome, r.Entity.Kind, r.Entity.ID, r.Request)
	}
	return b.String()
}

// verifyAudit runs `hdc audit verify` with args and checks its verdict:
// every trail "ok" when broken is nil, else a failure naming broken's
// workspace, seq and reason, with that trail's line "broken" at the seq.
func (s *stack) verifyAudit(t *testing.T, args []string, broken *audit.Break) {
	t.Helper()
	out, stderr, err := s.hdcRun(append([]string{"audit", "verify"}, args...)...)
	if broken == nil && err != nil {
		t.Fatalf("an untouched trail fails: %v", err)
	}
	if broken != nil {
		want := fmt.Sprintf("hdc: the audit trail of workspace %q breaks at record %d: %s", broken.Workspace, broken.Seq, broken.Reason)
		if err == nil || !strings.Contains(stderr, want) {
			t.Fatalf("hdc audit verify: %v, want it to fail with %q", err, want)
		}
	}
	for ws, v := range verifiedChains(t, out) {
		want := "ok"
		if broken != nil && ws == broken.Workspace {
			want = "broken"
		}
		if v.Status != want || (want == "broken" && v.Seq != broken.Seq) {
			t.Errorf("hdc audit verify: %+v, want status %s", v, want)
		}
	}
	if out == "" {
		t.Error("hdc audit verify printed no trail")
	}
}

// requestID returns the request id the edge answered r with.
func requestID(t *testing.T, r *response) string {
	t.Helper()
	id := r.header.Get("X-Request-Id")
	if id == "" {
		t.Fatalf("no X-Request-Id on %s", r)
	}
	return id
}

// refresh rotates old's refresh token through the edge as c.
func (s *stack) refresh(c *apiClient, old tokens) *response {
	s.t.Helper()
	b, _ := json.Marshal(map[string]string{"refresh_token": old.RefreshToken, "access_token": old.AccessToken})
	h := bearer(old)
	h["Client-Id"] = c.ID
	return s.send(c, false, "POST", refreshPath, b, h)
}

// failLogin logs in as clientID with a wrong secret and returns the
// refusal's request id.
func (s *stack) failLogin(t *testing.T, c *apiClient, clientID string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"client_id": clientID, "client_secret": "not-the-secret-of-anyone"})
	r := s.send(c, false, "POST", loginPath, b, nil)
	expectProblem(t, r, 401, "invalid_client")
	return requestID(t, r)
}

// TestAuditOperationsLogins: a login refused for a wrong secret is
// recorded as denied in the trail of the client's workspace when the
// client id is a known client's, and in the installation's trail without
// a client when it is not (backend/auth.Service.auditRefusal); a refresh
// through the edge, and the reuse of the rotated refresh token (which
// revokes the family), are recorded for their client, with the grant
// when the login was made with a sharing key, in the workspace acted in.
func TestAuditOperationsLogins(t *testing.T) {
	s := startStack(t)
	c, other := s.newClient("audit-ops-login"), s.newClient("audit-ops-owner")
	known := s.failLogin(t, c, c.ID)
	stranger := s.failLogin(t, c, uuid.NewString())

	tk := s.login(c, false, "")
	r := s.refresh(c, tk)
	if r.status != 200 {
		t.Fatalf("refresh: %s", r)
	}
	rotated := requestID(t, r)
	r = s.refresh(c, tk) // the rotated token again
	expectProblem(t, r, 401, "invalid_refresh_token")
	reused := requestID(t, r)

	var grant struct {
		GrantID    string `json:"grant_id"`
		SharingKey string `json:"sharing_key"`
	}
	s.hdc(&grant, "sharing", "grant", "--workspace", other.Workspace, "--client", c.ID)
	r = s.refresh(c, s.login(c, false, grant.SharingKey))
	if r.status != 200 {
		t.Fatalf("refresh of the shared login: %s", r)
	}
	shared := requestID(t, r)

	s.checkAudit(t, []auditWant{
		{"login_failed/known client", c.Workspace, audit.LoginFailed, audit.Denied, c.ID, "", audit.Entity{}, known},
		{"login_failed/unknown client", "", audit.LoginFailed, audit.Denied, "", "", audit.Entity{}, stranger},
		{"refresh", c.Workspace, audit.Refresh, audit.Success, c.ID, "", audit.Entity{}, rotated},
		{"refresh_reuse", c.Workspace, audit.RefreshReuse, audit.Denied, c.ID, "", audit.Entity{}, reused},
		{"refresh/shared", other.Workspace, audit.Refresh, audit.Success, c.ID, grant.GrantID, audit.Entity{}, shared},
	})
}

// parserResults is what a parser submits for a record: a FHIR Bundle.
const parserResults = `{"resourceType":"Bundle","type":"collection","entry":[
	{"fullUrl":"urn:uuid:patient","resource":{"resourceType":"Patient","id":"pt","name":[{"text":"Asha Rao"}]}},
	{"resource":{"resourceType":"Condition","code":{"text":"Fever"},"subject":{"reference":"urn:uuid:patient"}}}]}`

// submitResources posts parserResults for record cc on the backend's
// internal listener, as a parser does, under a request id of its own,
// which it returns.
func (s *stack) submitResources(cc string) string {
	s.t.Helper()
	req, err := http.NewRequest("POST", s.internal+"/internal/v1/records/"+url.PathEscape(cc)+"/resources",
		strings.NewReader(parserResults))
	if err != nil {
		s.t.Fatal(err)
	}
	id := uuid.NewString()
	req.Header.Set("Content-Type", "application/fhir+json")
	req.Header.Set("X-Hdc-Request-Id", id)
	resp, err := s.internalClient(pki.Parser).Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer struct{ Status string }
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != 200 || answer.Status != "parsed" {
		s.t.Fatalf("parser results: %d %+v %v", resp.StatusCode, answer, err)
	}
	return id
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
	s := startStack(t, "HDC_WEBHOOK_ALLOW_NETS=127.0.0.0/8", "HDC_WEBHOOK_POLL_INTERVAL=100ms")
	c := s.newClient("audit-ops-parser")
	tk := s.login(c, false, "")
	cc := s.upload(c, tk, false, []byte("a consultation to parse"), "")
	parsed := s.submitResources(cc)

	srv, hits := goneSubscriber(t)
	r := s.send(c, false, "POST", subsPath, []byte(`{"endpoint":"`+srv.URL+`/gone","protocol":"http"}`), bearer(tk))
	sub, _ := r.json(t)["id"].(string)
	if r.status != 200 || sub == "" {
		t.Fatalf("register: %s", r)
	}
	s.hdc(nil, "events", "publish", "--workspace", c.Workspace, "--type", "appointment.created", "--data", `{"appointment_id":"a-1"}`)
	s.waitFor("the subscription's disabling in the trail", func() bool {
		for _, rec := range s.storedAudit(c.Workspace) {
			if rec.Action == audit.DeliveryDisabled {
				return true
			}
		}
		return false
	})
	if hits.Load() == 0 {
		t.Fatal("the subscription was disabled, but no delivery reached the subscriber")
	}
	if list := s.send(c, false, "GET", subsPath, nil, bearer(tk)); !bytes.Contains(list.body, []byte(`"disabled"`)) {
		t.Errorf("the subscription is not listed as disabled: %s", list)
	}

	s.checkAudit(t, []auditWant{
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
	s := startStack(t)
	owner := s.newClient("audit-ops-owner")
	var c struct {
		ClientID    string `json:"client_id"`
		WorkspaceID string `json:"workspace_id"`
	}
	s.hdc(&c, "clients", "create", "--workspace", "audit-ops-operator")
	var grant struct {
		GrantID string `json:"grant_id"`
	}
	s.hdc(&grant, "sharing", "grant", "--workspace", owner.Workspace, "--client", c.ClientID)
	s.hdc(nil, "sharing", "revoke", "--grant", grant.GrantID)
	var added, rotated, stray struct {
		Kid string `json:"kid"`
	}
	s.hdc(&added, "keys", "add", "--client", c.ClientID)
	s.hdc(&rotated, "keys", "rotate", "--client", c.ClientID)
	s.hdc(nil, "keys", "retire", "--kid", added.Kid)
	// A standalone edge's registry file may hold a key of a client the
	// database does not know.
	s.hdc(&stray, "keys", "add", "--client", uuid.NewString(), "--registry", filepath.Join(t.TempDir(), "keys.json"))
	s.hdc(nil, "clients", "disable", "--client", c.ClientID)
	if added.Kid == "" || rotated.Kid == "" || rotated.Kid == added.Kid {
		t.Fatalf("keys add made %q, keys rotate %q", added.Kid, rotated.Kid)
	}

	ws := c.WorkspaceID
	client := audit.Entity{Kind: audit.EntityClient, ID: c.ClientID}
	grantEntity := audit.Entity{Kind: audit.EntityGrant, ID: grant.GrantID}
	key := func(kid string) audit.Entity { return audit.Entity{Kind: audit.EntityKey, ID: kid} }
	s.checkAudit(t, []auditWant{
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
		s.checkAuditExport(t, trail)
	}
}

// copyDatabase copies the stack's live SQLite database, consistently
// (VACUUM INTO), into a data directory of its own, runs the statement
// query (when not empty) on the copy, which must change one row, and
// returns the directory.
func (s *stack) copyDatabase(t *testing.T, query string, args ...any) string {
	t.Helper()
	dir := t.TempDir()
	live, err := sql.Open("sqlite", filepath.Join(s.dir, "backend", "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if _, err := live.Exec(`VACUUM INTO ?`, filepath.Join(dir, "hdc.db")); err != nil {
		t.Fatal(err)
	}
	if query == "" {
		return dir
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Exec(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("the tampering changed %d rows (%v), want 1", n, err)
	}
	return dir
}

// TestAuditOperationsTampering: `hdc audit verify` passes the stack's
// untouched trails, live or copied, and fails on a copy of the database
// where a record's stored content was altered (naming the record after
// it, whose prev no longer matches) or a middle record was deleted
// (naming that record), with its workspace.
func TestAuditOperationsTampering(t *testing.T) {
	s := startStack(t)
	c := s.newClient("audit-ops-tamper") // client_create, key_add
	tk := s.login(c, false, "")
	s.upload(c, tk, false, []byte("an audited consultation"), "")
	trail := s.auditTrail(c.Workspace)
	if len(trail) != 4 || trail[1].Action != audit.KeyAdd || trail[2].Action != audit.Login {
		t.Fatalf("the trail of %s:\n%s want client_create, key_add, login, record_upload", c.Workspace, auditSummary(trail))
	}
	s.verifyAudit(t, nil, nil)

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
			dir := s.copyDatabase(t, tt.query, tt.args...)
			s.verifyAudit(t, []string{"--data", dir}, tt.broken)
		})
	}
}

// TestAuditRetentionE2E: a backend whose retention (HDC_AUDIT_RETENTION)
// is shorter than the age of a trail removes the expired records when it
// starts and records that it did: the trail then begins with a
// retention_prune record naming the records it removed and the hash of
// the last, and hdc audit verify still passes from that anchor.
func TestAuditRetentionE2E(t *testing.T) {
	const ws = "audit-retention"
	dir := t.TempDir()
	ops := &stack{t: t, dir: dir, env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "HDC_DATA=" + dir}}
	createWebhookClient(t, dir, ws)
	createWebhookClient(t, dir, ws)
	old := ops.listAudit(ws)
	if len(old) != 2 || old[0].Action != audit.ClientCreate || old[1].Action != audit.ClientCreate {
		t.Fatalf("the trail before the backend ran: %+v", old)
	}

	startWebhookBackend(t, dir, "HDC_AUDIT_RETENTION=1ms")
	var trail []listedRecord
	ops.waitFor("the retention job's record", func() bool {
		trail = ops.listAudit(ws)
		return len(trail) > 0 && trail[0].Action == audit.RetentionPrune
	})
	var pruned struct {
		Pruned struct {
			From, Through int64
			Last          string
		}
	}
	if err := json.Unmarshal([]byte(trail[0].line), &pruned); err != nil {
		t.Fatal(err)
	}
	if p := pruned.Pruned; len(trail) != 1 || trail[0].Seq != 3 || p.From != 1 || p.Through != 2 || p.Last != old[1].Hash {
		t.Fatalf("after the retention job the trail is\n%s\nwant one record, seq 3, pruning 1 to 2 after %s", trail[0].line, old[1].Hash)
	}
	ops.verifyAudit(t, nil, nil)
}
