package backend

import (
	"context"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/auth"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/postgres/pgtest"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/contract"
)

// edgeFields are the headers the edge adds to a request of a client at
// addr, with a new request id, which they return too; an encrypted one's
// also name its key: key is the kid and its owner.
func edgeFields(addr string, key ...string) ([]string, string) {
	id := uuid.NewString()
	hs := []string{contract.HeaderClientIP, addr, contract.HeaderRequestID, id}
	if len(key) == 2 {
		hs = append(hs, contract.HeaderKeyID, key[0], contract.HeaderKeyClientID, key[1])
	}
	return hs, id
}

// clientTrail returns ws's records after seq after, and fails unless the
// whole chain verifies.
func clientTrail(t *testing.T, s store.Store, ws string, after int64) []audit.Record {
	t.Helper()
	rs, err := s.ListAudit(context.Background(), store.AuditFilter{Workspace: ws, After: after})
	if err != nil {
		t.Fatal(err)
	}
	hs, err := s.AuditHeads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if h.Workspace == ws {
			if err := store.VerifyAudit(context.Background(), s, h, store.AuditCheck{}); err != nil {
				t.Fatalf("chain of %q: %v", ws, err)
			}
		}
	}
	return rs
}

// lastSeq is the seq of ws's last record, 0 for none.
func lastSeq(t *testing.T, s store.Store, ws string) int64 {
	t.Helper()
	rs := clientTrail(t, s, ws, 0)
	if len(rs) == 0 {
		return 0
	}
	return rs[len(rs)-1].Seq
}

// wantRecord fails unless r is of action and outcome, with these fields.
func wantRecord(t *testing.T, r audit.Record, action audit.Action, outcome audit.Outcome, client, grant string, entity audit.Entity, source, kid, request string) {
	t.Helper()
	var src netip.Addr
	if source != "" {
		src = netip.MustParseAddr(source)
	}
	if r.Action != action || r.Outcome != outcome || r.Client != client || r.Grant != grant || r.Entity != entity ||
		r.Source != src || r.Kid != kid || r.Request != request || r.At.IsZero() {
		t.Errorf("record %d = %+v, want %s %s client %q grant %q entity %+v source %s kid %q request %q",
			r.Seq, r.Event, action, outcome, client, grant, entity, source, kid, request)
	}
}

// TestAuditClientActions: each action of a client is recorded in the
// trail of the workspace where it happened, with the request's fields, and
// no record holds a secret, a token or a key.
// On both engines.
func TestAuditClientActions(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { testAuditClientActions(t, "") })
	t.Run("PostgreSQL", func(t *testing.T) { testAuditClientActions(t, pgtest.URL(t)) })
}

func testAuditClientActions(t *testing.T, database string) {
	h := start(t, func(c *Config) {
		c.DatabaseURL = database
		c.WebhookAllowNets = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	s := h.srv.store
	alice := h.client("alpha")
	bob := h.client("beta")
	grant, err := h.srv.Identity().GrantSharing(context.Background(), audittest.Operator, "alpha", bob.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	fromA, fromB, fromInst := lastSeq(t, s, "alpha"), lastSeq(t, s, "beta"), lastSeq(t, s, "")
	var secrets []string
	secrets = append(secrets, alice.ClientSecret, bob.ClientSecret, grant.SharingKey)

	// Login, and logins refused: a known client's in its trail, an
	// unknown one's in the installation's, without a client.
	edge, req1 := edgeFields("2001:db8:1:2:3:4:5:6")
	res := h.postJSON(contract.PathLogin, map[string]string{"client_id": alice.ClientID, "client_secret": alice.ClientSecret}, edge...)
	if res.StatusCode != 200 {
		t.Fatalf("login: %d %s", res.StatusCode, res.body)
	}
	var pair auth.TokenPair
	res.json(t, &pair)
	secrets = append(secrets, pair.AccessToken, pair.RefreshToken)
	edge, req2 := edgeFields("203.0.113.7")
	wantProblem(t, h.postJSON(contract.PathLogin, map[string]string{"client_id": alice.ClientID, "client_secret": "wrong-secret-123"}, edge...), 401, "invalid_client")
	secrets = append(secrets, "wrong-secret-123")
	edge, req3 := edgeFields("203.0.113.8")
	unknown := uuid.NewString()
	wantProblem(t, h.postJSON(contract.PathLogin, map[string]string{"client_id": unknown, "client_secret": "guess-4567"}, edge...), 401, "invalid_client")
	secrets = append(secrets, "guess-4567")

	// Refresh, then the rotated token again: reuse.
	edge, req4 := edgeFields("203.0.113.7", "kid-1", alice.ClientID)
	res = h.postJSON(contract.PathRefresh, map[string]string{"refresh_token": pair.RefreshToken},
		append(append(h.as(pair), "Client-Id", alice.ClientID), edge...)...)
	if res.StatusCode != 200 {
		t.Fatalf("refresh: %d %s", res.StatusCode, res.body)
	}
	var next auth.TokenPair
	res.json(t, &next)
	secrets = append(secrets, next.AccessToken, next.RefreshToken)
	edge, req5 := edgeFields("198.51.100.9")
	wantProblem(t, h.postJSON(contract.PathRefreshCompat, map[string]string{"refresh_token": pair.RefreshToken}, edge...), 401, "invalid_refresh_token")

	// Upload, retrieve (found and not), parser submission, as a new login.
	as := h.as(h.login(alice, ""))
	edge, req6 := edgeFields("203.0.113.7", "kid-1", alice.ClientID)
	up := h.upload(append(slices.Clone(as), edge...), "visit.wav", wav, "")
	edge, req7 := edgeFields("203.0.113.7", "kid-1", alice.ClientID)
	h.retrieve(append(slices.Clone(as), edge...), up.CareContextID)
	edge, req8 := edgeFields("203.0.113.7")
	missing := uuid.NewString()
	wantProblem(t, h.do("GET", h.public+contract.PathRetrieve+"?identifier="+url.QueryEscape(missing), nil, append(slices.Clone(as), edge...)...), 404, "not_found")
	if res := h.postResources(up.CareContextID, parserResults); res.StatusCode != 200 {
		t.Fatalf("resources: %d %s", res.StatusCode, res.body)
	}

	// A sharing grant's client reads alpha's record: alpha's trail.
	shared := h.login(bob, grant.SharingKey)
	edge, req9 := edgeFields("192.0.2.44")
	h.retrieve(append(h.as(shared), edge...), up.CareContextID)

	// A subscription created and deleted.
	const key = "whsec-0123456789abcdef-audit"
	secrets = append(secrets, key)
	edge, req10 := edgeFields("203.0.113.7")
	res = h.postJSON(contract.PathSubscriptions, `{"endpoint":"https://hooks.example.com/hdc","signing_key":"`+key+`"}`, append(slices.Clone(as), edge...)...)
	if res.StatusCode != 200 {
		t.Fatalf("register: %d %s", res.StatusCode, res.body)
	}
	var reg webhook.Registered
	res.json(t, &reg)
	edge, req11 := edgeFields("203.0.113.7")
	if res := h.do("DELETE", h.public+contract.PathSubscriptions+"/"+reg.ID, nil, append(slices.Clone(as), edge...)...); res.StatusCode != 204 {
		t.Fatalf("delete: %d %s", res.StatusCode, res.body)
	}

	a := clientTrail(t, s, "alpha", fromA)
	var actions []audit.Action
	for _, r := range a {
		actions = append(actions, r.Action)
	}
	want := []audit.Action{audit.Login, audit.LoginFailed, audit.Refresh, audit.RefreshReuse, audit.Login, audit.RecordUpload,
		audit.RecordRetrieve, audit.RecordRetrieve, audit.ResourcesSubmit, audit.Login, audit.RecordRetrieve,
		audit.SubscriptionCreate, audit.SubscriptionDelete}
	if !slices.Equal(actions, want) {
		t.Fatalf("alpha's trail = %v, want %v", actions, want)
	}
	cc := audit.Entity{Kind: audit.EntityCareContext, ID: up.CareContextID}
	sub := audit.Entity{Kind: audit.EntitySubscription, ID: reg.ID}
	A := alice.ClientID
	wantRecord(t, a[0], audit.Login, audit.Success, A, "", audit.Entity{}, "2001:db8:1:2:3:4:5:6", "", req1)
	wantRecord(t, a[1], audit.LoginFailed, audit.Denied, A, "", audit.Entity{}, "203.0.113.7", "", req2)
	wantRecord(t, a[2], audit.Refresh, audit.Success, A, "", audit.Entity{}, "203.0.113.7", "kid-1", req4)
	wantRecord(t, a[3], audit.RefreshReuse, audit.Denied, A, "", audit.Entity{}, "198.51.100.9", "", req5)
	wantRecord(t, a[5], audit.RecordUpload, audit.Success, A, "", cc, "203.0.113.7", "kid-1", req6)
	wantRecord(t, a[6], audit.RecordRetrieve, audit.Success, A, "", cc, "203.0.113.7", "kid-1", req7)
	wantRecord(t, a[7], audit.RecordRetrieve, audit.Denied, A, "", audit.Entity{Kind: audit.EntityCareContext, ID: missing}, "203.0.113.7", "", req8)
	wantRecord(t, a[8], audit.ResourcesSubmit, audit.Success, "", "", cc, "127.0.0.1", "", "")
	// (h.login sends the edge's headers with a request id of its own.)
	wantRecord(t, a[9], audit.Login, audit.Success, bob.ClientID, grant.GrantID, audit.Entity{}, "127.0.0.1", "", a[9].Request)
	if !contract.IsUUID(a[9].Request) {
		t.Errorf("the sharing login's record has request %q", a[9].Request)
	}
	wantRecord(t, a[10], audit.RecordRetrieve, audit.Success, bob.ClientID, grant.GrantID, cc, "192.0.2.44", "", req9)
	wantRecord(t, a[11], audit.SubscriptionCreate, audit.Success, A, "", sub, "203.0.113.7", "", req10)
	wantRecord(t, a[12], audit.SubscriptionDelete, audit.Success, A, "", sub, "203.0.113.7", "", req11)

	// Beta's trail: nothing of bob's acts in alpha.
	if b := clientTrail(t, s, "beta", fromB); len(b) != 0 {
		t.Fatalf("beta's trail = %+v", b)
	}
	inst := clientTrail(t, s, "", fromInst)
	if len(inst) != 1 {
		t.Fatalf("installation's trail = %+v", inst)
	}
	wantRecord(t, inst[0], audit.LoginFailed, audit.Denied, "", "", audit.Entity{}, "203.0.113.8", "", req3)

	for _, r := range append(a, inst...) {
		body := string(r.Canonical())
		for _, secret := range secrets {
			if secret != "" && strings.Contains(body, secret) {
				t.Fatalf("record %s holds a secret or token", body)
			}
		}
	}
}
