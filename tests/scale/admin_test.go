package scale

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// The persons of the Admin API's fleet tests, as their certificates name
// them.
const (
	alice = "alice@example.org" // an operator
	bob   = "bob@example.org"   // an auditor
	carol = "carol@example.org" // an operator whose certificate is revoked
)

// adminCallers are the columns of the role matrix: each role of the hop,
// a certificate of another authority, and none.
var adminCallers = []string{"operator", "auditor", "edge", "publisher", "parser", "scraper", "foreign CA", "no certificate"}

// people issues the persons' certificates, and the roles' the matrix
// needs, in the cluster's hop directory.
func (c *cluster) people(t *testing.T) {
	t.Helper()
	for _, p := range []struct{ role, name string }{{"operator", alice}, {"auditor", bob}, {"operator", carol}} {
		c.ops.HDC(nil, "tls", "issue", "--role", p.role, "--name", p.name, "--dir", c.ops.Hop)
	}
	for _, role := range []string{"publisher", "parser"} {
		c.ops.HDC(nil, "tls", "issue", "--role", role, "--dir", c.ops.Hop)
	}
}

// personEnv is the environment of hdc run by name, with the certificate
// of that name, against backend i's Admin API: no database URL, no keeper
// and no data directory, as on an operator's laptop.
func (c *cluster) personEnv(name string, i int) []string {
	hop := c.ops.Hop
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + c.ops.Dir,
		"HDC_ADMIN_URL=" + c.backends[i].internal,
		"HDC_ADMIN_CERT=" + filepath.Join(hop, name+".pem"), "HDC_ADMIN_KEY=" + filepath.Join(hop, name+"-key.pem"),
		"HDC_ADMIN_CA=" + filepath.Join(hop, pki.CAFile)}
}

// person returns a stack whose hdc runs as name against backend i, and
// whose clients log in through edge 1.
func (c *cluster) person(t *testing.T, name string, i int) *hdctest.Stack {
	return &hdctest.Stack{T: t, Dir: c.ops.Dir, Env: c.personEnv(name, i), HTTP: c.ops.HTTP, Hop: c.ops.Hop,
		Internal: c.ops.Internal, EdgeMetrics: c.ops.EdgeMetrics, Edge: c.edges[0].Edge}
}

// adminClient returns a client of the backends' internal listeners as who,
// a column of the role matrix.
func (c *cluster) adminClient(t *testing.T, who string) *http.Client {
	t.Helper()
	dir, name := c.ops.Hop, who
	switch who {
	case "operator":
		name = alice
	case "auditor":
		name = bob
	case "edge":
		name = "edge-1"
	case "foreign CA":
		dir = t.TempDir()
		if err := pki.InitDir(dir, time.Hour, false); err != nil {
			t.Fatal(err)
		}
		if _, err := pki.IssueFromDir(dir, pki.Leaf{Role: pki.Operator, Name: alice}, time.Hour, false); err != nil {
			t.Fatal(err)
		}
		foreign, err := pki.ClientTLS(filepath.Join(dir, alice+".pem"), filepath.Join(dir, alice+"-key.pem"), filepath.Join(dir, pki.CAFile))
		if err != nil {
			t.Fatal(err)
		}
		// It trusts the fleet's authority, so that only its certificate
		// is foreign.
		ours, err := pki.ClientTLS("", "", filepath.Join(c.ops.Hop, pki.CAFile))
		if err != nil {
			t.Fatal(err)
		}
		foreign.RootCAs = ours.RootCAs
		return &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: foreign}}
	case "no certificate":
		name = ""
	}
	var cert, key string
	if name != "" {
		cert, key = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	}
	cfg, err := pki.ClientTLS(cert, key, filepath.Join(dir, pki.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: cfg}}
}

// adminAnswer is an answer of the Admin API, or the error that stood for
// one.
type adminAnswer struct {
	hdctest.Answer
	err error
}

// adminCall sends method path (under adminapi.Prefix) to backend i as client,
// with a JSON body when body is not nil, and checks every answer against
// docs/admin-openapi.yaml.
func (c *cluster) adminCall(t *testing.T, client *http.Client, i int, method, path string, body any) adminAnswer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, c.backends[i].internal+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return adminAnswer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := hdctest.Answer{Method: method, Path: strings.TrimPrefix(req.URL.Path, adminapi.Prefix), Status: resp.StatusCode, Header: resp.Header, Body: b}
	doc, err := hdctest.AdminOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Check(a, nil); err != nil {
		t.Errorf("%s %s: against docs/admin-openapi.yaml: %v\n%s", method, path, err, b)
	}
	return adminAnswer{Answer: a}
}

// problemCode is the code of the answer's problem, "" when none.
func (a adminAnswer) problemCode() string {
	var p struct{ Code string }
	_ = json.Unmarshal(a.Body, &p)
	return p.Code
}

// TestAdminAPIOnTheFleet: the Admin API, on two hdc-backend processes over
// one PostgreSQL database, the real programs in the shape docs/deploy.md
// deploys. The role matrix holds on backend 2 for every route; alice, an
// operator, runs every operator command that is not bootstrap with no
// database URL, keeper or data directory in her environment, against
// either backend; bob, an auditor, reads (the people who used the API
// among it) and is refused changes; carol's
// certificate, revoked through one backend, is refused by both within
// 2 seconds (the deny-list's refresh); and every change is found in the
// audit trail by the person who made it.
func TestAdminAPIOnTheFleet(t *testing.T) {
	c := startCluster(t)
	c.people(t)
	t.Run("role matrix", func(t *testing.T) { c.roleMatrix(t, 1) })
	t.Run("operator commands without the database", func(t *testing.T) { c.operatorCommands(t) })
	t.Run("revocation", func(t *testing.T) { c.revocation(t) })
}

// roleMatrix calls every route of the Admin API as every caller on backend
// i: an operator is served everywhere, an auditor on the reads, every
// other role and no certificate get 403 forbidden, and a certificate of
// another authority does not get through the handshake. "Served" means
// the route answered for itself: its ids do not exist and its bodies are
// missing, so nothing changes.
func (c *cluster) roleMatrix(t *testing.T, i int) {
	pathID := regexp.MustCompile(`\{[a-z_]+\}`)
	clients := map[string]*http.Client{}
	for _, who := range adminCallers {
		clients[who] = c.adminClient(t, who)
	}
	cells := 0
	for _, rt := range adminapi.Routes() {
		path := pathID.ReplaceAllString(rt.Path, "none")
		for _, who := range adminCallers {
			a := c.adminCall(t, clients[who], i, rt.Method, path, nil)
			cells++
			switch {
			case who == "foreign CA":
				if a.err == nil {
					t.Errorf("%s %s as %s: got through the handshake: %d %s", rt.Method, rt.Path, who, a.Status, a.Body)
				}
			case slices.Contains(rt.Roles, contract.Role(who)):
				if a.err != nil || a.Status == http.StatusForbidden || a.Status == http.StatusUnauthorized {
					t.Errorf("%s %s as %s: refused: %d %s (%v)", rt.Method, rt.Path, who, a.Status, a.Body, a.err)
				}
			default:
				if a.err != nil || a.Status != http.StatusForbidden || a.problemCode() != "forbidden" {
					t.Errorf("%s %s as %s: %d %s (%v), want 403 forbidden", rt.Method, rt.Path, who, a.Status, a.Body, a.err)
				}
			}
		}
	}
	t.Logf("the role matrix: %d routes × %d callers = %d cells on hdc-backend-%d", len(adminapi.Routes()), len(adminCallers), cells, i+1)
}

// operatorCommands runs the operator commands that are not bootstrap as
// alice, with no database URL, keeper or data directory, through either
// backend, and as bob, who may read and not change; then finds each change
// by its author, in the Admin API's search and in the FHIR AuditEvent
// route.
func (c *cluster) operatorCommands(t *testing.T) {
	a1, a2, b := c.person(t, alice, 0), c.person(t, alice, 1), c.person(t, bob, 1)
	var me adminapi.Person
	a1.HDC(&me, "whoami")
	if me.Name != alice || me.Role != "operator" || me.Serial == "" || me.Direct {
		t.Fatalf("hdc whoami as alice: %+v", me)
	}
	owner := a1.NewClientEnc("admin-fleet", hdctest.EncGCM) // clients create and keys add, through backend 1
	var other identity.Credentials
	a2.HDC(&other, "clients", "create", "--workspace", "admin-fleet")
	var listed []identity.Client
	b.HDC(&listed, "clients", "list", "--workspace", "admin-fleet", "--status", "active")
	if len(listed) != 2 {
		t.Fatalf("hdc clients list as bob, through backend 2: %+v", listed)
	}
	if _, _, err := b.HDCRun("clients", "disable", "--client", other.ClientID); err == nil || !strings.Contains(err.Error(), "operator") {
		t.Fatalf("bob, an auditor, disabled a client: %v", err)
	}
	a2.HDC(nil, "clients", "disable", "--client", other.ClientID)
	c.lastUseShown(t, b, owner)
	c.sharingAndSubscriptions(t, a1, a2, b, owner)
	var rot struct{ Retiring []string }
	a2.HDC(&rot, "keys", "rotate", "--client", owner.ID)
	a1.HDC(nil, "keys", "retire", "--kid", owner.Kid)
	// The edges report every contract.EdgeReportEvery.
	testkit.Eventually(t, 3*contract.EdgeReportEvery, "hdc fleet, as bob, to list 2 backends and 2 edges", func() bool {
		var backends, edges []map[string]any
		b.HDC(&backends, "fleet", "backends")
		b.HDC(&edges, "fleet", "edges")
		return len(backends) == 2 && len(edges) == 2
	})
	var people []adminapi.PersonSeen
	b.HDC(&people, "fleet", "people")
	if len(people) < 2 || people[0].Name != alice || people[1].Name != bob || people[0].Role != "operator" || people[1].Role != "auditor" {
		t.Fatalf("hdc fleet people as bob, after alice used both backends and bob backend 2: %+v", people)
	}
	b.HDC(nil, "audit", "verify")
	if out, _, err := b.HDCRun("audit", "export", "--workspace", "admin-fleet"); err != nil || !strings.Contains(out, `"resourceType":"AuditEvent"`) {
		t.Fatalf("hdc audit export as bob: %v\n%.300s", err, out)
	}
	want := []string{"client_create", "key_add", "client_disable", "sharing_grant", "subscription_delete", "key_rotate", "key_retire"}
	c.searchedByAgent(t, b, alice, want...)
	c.searchedByAgent(t, a1, bob, "audit_search", "audit_verify", "audit_export")
	c.foundByAgent(t, alice, serialOf(t, c.ops.Hop, alice), owner, "client_create", "key_add", "client_disable", "subscription_delete", "key_rotate", "key_retire")
}

// lastUseShown uses owner's key through edge 1, then at once through edge
// 2, and waits until the Admin API, asked by who through backend 2, shows
// the later use as the key's last: within 10 s.
func (c *cluster) lastUseShown(t *testing.T, who *hdctest.Stack, owner *hdctest.APIClient) {
	tk := c.edges[0].Login(owner, true, "")
	if st := c.edges[0].EncryptedStatus(owner, tk); st != http.StatusOK {
		t.Fatalf("through edge 1: %d", st)
	}
	before := time.Now()
	if st := c.edges[1].EncryptedStatus(owner, tk); st != http.StatusOK {
		t.Fatalf("through edge 2: %d", st)
	}
	after := time.Now()
	const bound = 10 * time.Second
	testkit.Eventually(t, bound, "hdc keys list to show the key's use through edge 2", func() bool {
		var keys []struct {
			Kid        string
			LastUsedAt *time.Time `json:"last_used_at"`
		}
		who.HDC(&keys, "keys", "list", "--client", owner.ID, "--json")
		return len(keys) == 1 && keys[0].LastUsedAt != nil && !keys[0].LastUsedAt.Before(before)
	})
	t.Logf("the key's last use through edge 2 shown by the Admin API %v after the request (bound %v)", time.Since(after).Round(time.Millisecond), bound)
}

// sharingAndSubscriptions grants owner's client a workspace of its own and
// revokes the grant, as alice through either backend, and deletes the
// subscription owner made through an edge; bob lists both and changes
// neither.
func (c *cluster) sharingAndSubscriptions(t *testing.T, a1, a2, b *hdctest.Stack, owner *hdctest.APIClient) {
	a1.HDC(nil, "clients", "create", "--workspace", "admin-fleet-2")
	var g identity.Grant
	a1.HDC(&g, "sharing", "grant", "--workspace", "admin-fleet-2", "--client", owner.ID)
	var grants []identity.GrantInfo
	b.HDC(&grants, "sharing", "list", "--client", owner.ID)
	if len(grants) != 1 || grants[0].GrantID != g.GrantID || strings.Contains(fmt.Sprint(grants), g.SharingKey) {
		t.Fatalf("hdc sharing list as bob: %+v", grants)
	}
	a2.HDC(nil, "sharing", "revoke", "--grant", g.GrantID)

	tk := c.edges[1].Login(owner, false, "")
	r := c.edges[1].Send(owner, false, "POST", "/notification/v1/connect/webhook/subscriptions",
		[]byte(`{"endpoint":"https://hooks.example.org/admin-fleet"}`), hdctest.WithBodyType(hdctest.Bearer(tk), []byte("{}")))
	var sub struct{ ID string }
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &sub) != nil || sub.ID == "" {
		t.Fatalf("a subscription through edge 2: %s", r)
	}
	var one adminapi.Subscription
	b.HDC(&one, "subscriptions", "get", "--subscription", sub.ID)
	if one.ID != sub.ID || one.WorkspaceID != "admin-fleet" {
		t.Fatalf("hdc subscriptions get as bob: %+v", one)
	}
	var subs []adminapi.Subscription
	b.HDC(&subs, "subscriptions", "list", "--workspace", "admin-fleet")
	// The encrypted requests before made subscriptions of their own.
	if !slices.ContainsFunc(subs, func(s adminapi.Subscription) bool { return s.ID == sub.ID && s.WorkspaceID == "admin-fleet" }) {
		t.Fatalf("hdc subscriptions list as bob lacks %s: %+v", sub.ID, subs)
	}
	if _, _, err := b.HDCRun("subscriptions", "delete", "--subscription", sub.ID); err == nil {
		t.Fatal("bob, an auditor, deleted a subscription")
	}
	a1.HDC(nil, "subscriptions", "delete", "--subscription", sub.ID)
}

// searchedByAgent checks that hdc audit list --agent name, run by who,
// finds the records of every one of actions, each naming the person.
func (c *cluster) searchedByAgent(t *testing.T, who *hdctest.Stack, name string, actions ...string) {
	t.Helper()
	out, _, err := who.HDCRun("audit", "list", "--agent", name)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct {
			Action string
			Person struct{ Name, Role, Serial string }
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.Person.Name != name || r.Person.Serial == "" {
			t.Fatalf("hdc audit list --agent %s printed %q (%v)", name, line, err)
		}
		seen[r.Action] = true
	}
	for _, a := range actions {
		if !seen[a] {
			t.Errorf("hdc audit list --agent %s finds no %s; it finds %v", name, a, seen)
		}
	}
}

// foundByAgent checks that reader, a client, finds through an edge in its
// workspace's trail
// the audit events of the FHIR route whose agent is the person name: each a human user of that name with the certificate's serial as
// its altId, and among them every one of actions.
func (c *cluster) foundByAgent(t *testing.T, name, serial string, reader *hdctest.APIClient, actions ...string) {
	t.Helper()
	e := c.edges[1]
	tk := e.Login(reader, false, "")
	bundle := hdctest.CheckAuditBundle(t, e.Send(reader, false, "GET", "/health/api/v1/fhir/AuditEvent?_count=200&agent="+name, nil, hdctest.Bearer(tk)))
	seen := map[string]bool{}
	entries, _ := bundle["entry"].([]any)
	for _, en := range entries {
		var ev struct {
			Extension []struct{ URL, ValueCode string }
			Agent     []struct {
				Who   struct{ Identifier struct{ Value string } }
				AltID string `json:"altId"`
			}
		}
		b, _ := json.Marshal(en.(map[string]any)["resource"])
		if err := json.Unmarshal(b, &ev); err != nil || len(ev.Agent) == 0 {
			t.Fatalf("an AuditEvent: %s (%v)", b, err)
		}
		if ev.Agent[0].Who.Identifier.Value != name || ev.Agent[0].AltID != serial {
			t.Fatalf("an AuditEvent found by agent %s names %+v", name, ev.Agent[0])
		}
		for _, x := range ev.Extension {
			seen[x.ValueCode] = true
		}
	}
	for _, a := range actions {
		if !seen[a] {
			t.Errorf("the FHIR AuditEvent search by agent %s lacks %s; found %v", name, a, seen)
		}
	}
}

// serialOf returns the serial, in hex, of name's certificate in the hop's
// directory.
func serialOf(t *testing.T, hop, name string) string {
	return certSerial(t, filepath.Join(hop, name+".pem"))
}

// revocation revokes carol's certificate through backend 1, as alice;
// both backends refuse it within admin.DenyListTTL of the answer (a
// second more for a loaded machine).
func (c *cluster) revocation(t *testing.T) {
	hop := c.ops.Hop
	cfg, err := pki.ClientTLS(filepath.Join(hop, carol+".pem"), filepath.Join(hop, carol+"-key.pem"), filepath.Join(hop, pki.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	asCarol := &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: cfg}}
	for i := range c.backends {
		if a := c.adminCall(t, asCarol, i, "GET", adminapi.Prefix+"/whoami", nil); a.Status != http.StatusOK {
			t.Fatalf("carol before her revocation, backend %d: %d %s", i+1, a.Status, a.Body)
		}
	}
	var rev adminapi.Revocation
	c.person(t, alice, 0).HDC(&rev, "tls", "revoke", "--serial", certSerial(t, filepath.Join(hop, carol+".pem")), "--name", carol, "--role", "operator")
	revoked := time.Now()
	if rev.RevokedBy != alice {
		t.Fatalf("the revocation names %q, not alice", rev.RevokedBy)
	}
	for i := range c.backends {
		testkit.Eventually(t, admin.DenyListTTL+time.Second, fmt.Sprint("backend ", i+1, " to refuse carol"), func() bool {
			return c.adminCall(t, asCarol, i, "GET", adminapi.Prefix+"/whoami", nil).Status == http.StatusForbidden
		})
	}
	t.Logf("carol's certificate refused by both backends %v after its revocation (bound %v)", time.Since(revoked), admin.DenyListTTL+time.Second)
	var list []adminapi.Revocation
	c.person(t, bob, 1).HDC(&list, "tls", "revoked")
	if len(list) != 1 || list[0].Serial != rev.Serial || list[0].RevokedBy != alice {
		t.Fatalf("hdc tls revoked as bob: %+v", list)
	}
	c.searchedByAgent(t, c.person(t, bob, 0), alice, "certificate_revoke")
}

// certSerial returns the serial of the certificate in the PEM file at
// path, in hex.
func certSerial(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s holds no PEM", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", cert.SerialNumber)
}
