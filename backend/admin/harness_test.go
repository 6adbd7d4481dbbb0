package admin

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/problem"
)

// The persons of the tests, as their certificates name them.
const (
	alice = "alice@example.org" // an operator
	bob   = "bob@example.org"   // an auditor
)

// api is the Admin API over a new SQLite store, served over the hop's TLS
// as the backend's internal listener serves it (a client certificate if
// given, of the hop's authority), with a client of each role.
type api struct {
	t       *testing.T
	st      store.Store
	url     string
	deny    *DenyList
	clients map[string]*http.Client // by who: a role, "foreign CA", "no certificate"
	hop     string                  // the hop's directory
	// grants is the copy of the webhook destinations granted, which the
	// service tells of its changes.
	grants *webhook.Grants
	// tester is where the test events go.
	tester *fakeTester
}

// fakeTester records the subscriptions it sends a test event, and
// answers that the receiver answered 503.
type fakeTester struct {
	mu  sync.Mutex
	got []store.Subscription
}

func (f *fakeTester) SendTest(_ context.Context, sub store.Subscription) webhook.TestResult {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, sub)
	return webhook.TestResult{EventID: "msg_1", Outcome: "http_503", Status: 503, Duration: 1500 * time.Millisecond}
}

// sent returns the subscriptions sent a test event.
func (f *fakeTester) sent() []store.Subscription {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

func newAPI(t *testing.T) *api {
	t.Helper()
	return newAPIWith(t, trail.Config{})
}

// newAPIWith is newAPI whose audit trail verifies against cfg.
func newAPIWith(t *testing.T, cfg trail.Config) *api {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a := &api{t: t, st: st, hop: hopDir(t, true), deny: NewDenyList(st, time.Hour), grants: webhook.NewGrants(st, time.Hour), tester: &fakeTester{}}
	zl := zaptest.NewLogger(t)
	opened := func(s store.Subscription) store.Subscription { s.SigningKey = "opened:" + s.SigningKey; return s }
	h := NewHandler(New(st, identity.New(st, 1), keyadmin.New(st), WithTrail(trail.New(st, cfg)), WithGrants(a.grants),
		WithTests(webhook.NewTestEvents(st, opened, a.tester, zl))),
		HandlerConfig{HopTLS: true, Idempotency: st, DenyList: a.deny, Log: zl})
	mux := web.NewMux()
	h.Register(mux)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := a.deny.Check(r); p != nil {
			problem.Write(w, p)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	srv.TLS = serverTLS(t, a.hop)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the foreign certificates' refused handshakes
	srv.StartTLS()
	t.Cleanup(srv.Close)
	a.url = srv.URL
	a.clients = map[string]*http.Client{"no certificate": client(t, a.hop, "", "")}
	for _, role := range []pki.Role{pki.Edge, pki.Publisher, pki.Parser, pki.Scraper} {
		a.clients[string(role)] = client(t, a.hop, string(role), "")
	}
	a.clients[string(pki.Operator)] = client(t, a.hop, alice, "")
	a.clients[string(pki.Auditor)] = client(t, a.hop, bob, "")
	foreign := hopDir(t, false)
	a.clients["foreign CA"] = client(t, foreign, alice, a.hop)
	return a
}

// hopDir makes a hop's authority with a certificate of every client role,
// the persons' named alice (operator) and bob (auditor).
func hopDir(t *testing.T, all bool) string {
	t.Helper()
	dir := t.TempDir()
	if err := pki.InitDir(dir, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	leaves := []pki.Leaf{{Role: pki.Operator, Name: alice}}
	if all {
		leaves = append(leaves, pki.Leaf{Role: pki.Auditor, Name: bob}, pki.Leaf{Role: pki.Publisher},
			pki.Leaf{Role: pki.Parser}, pki.Leaf{Role: pki.Scraper})
	}
	for _, l := range leaves {
		if _, err := pki.IssueFromDir(dir, l, time.Hour, false); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// serverTLS is the internal listener's TLS: the backend's certificate, a
// client certificate of the hop's authority if given.
func serverTLS(t *testing.T, dir string) *tls.Config {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, pki.CertFile(pki.Backend)), filepath.Join(dir, pki.KeyFile(pki.Backend)))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join(dir, pki.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert}, ClientCAs: pool,
		ClientAuth: tls.VerifyClientCertIfGiven}
}

// client returns a client presenting the certificate name of dir (none
// for ""), trusting the authority of trust (dir's when "").
func client(t *testing.T, dir, name, trust string) *http.Client {
	t.Helper()
	if trust == "" {
		trust = dir
	}
	var cert, key string
	if name != "" {
		cert, key = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	}
	cfg, err := pki.ClientTLS(cert, key, filepath.Join(trust, pki.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 30 * time.Second}
}

// reply is an answer of the API.
type reply struct {
	status int
	header http.Header
	body   []byte
	err    error // the exchange's, when it failed (a refused handshake)
}

// do sends method path with body (JSON, none when nil) as who, with the
// extra headers given as name, value pairs.
func (a *api) do(who, method, path string, body any, headers ...string) reply {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(a.t.Context(), method, a.url+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := a.clients[who].Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b, err: err}
}

// decode reads r's JSON body into v, failing the test unless r has status.
func (r reply) decode(t *testing.T, status int, v any) {
	t.Helper()
	if r.err != nil || r.status != status {
		t.Fatalf("got %d %s (%v), want %d", r.status, r.body, r.err, status)
	}
	if v != nil {
		if err := json.Unmarshal(r.body, v); err != nil {
			t.Fatalf("%s: %v", r.body, err)
		}
	}
}

// problemCode returns the code of r's problem body, "" when it is not one.
func (r reply) problemCode() string {
	var p problem.Problem
	if r.header.Get("Content-Type") != problem.ContentType || json.Unmarshal(r.body, &p) != nil {
		return ""
	}
	return p.Code
}

// roles of the matrix's callers.
var matrixCallers = []string{string(contract.RoleOperator), string(contract.RoleAuditor), string(contract.RoleEdge),
	string(contract.RolePublisher), string(contract.RoleParser), string(contract.RoleScraper), "foreign CA", "no certificate"}

// StartAPI serves a new Admin API for the external tests (package
// admin_test: the client's), and returns its URL, the TLS configuration
// of each caller (by role, as in TestRoleMatrix) and its store.
func StartAPI(t *testing.T) (url string, callers map[string]*tls.Config, st store.Store) {
	return StartAPIWith(t, trail.Config{})
}

// StartAPIWith is StartAPI whose audit trail verifies against cfg.
func StartAPIWith(t *testing.T, cfg trail.Config) (url string, callers map[string]*tls.Config, st store.Store) {
	a := newAPIWith(t, cfg)
	callers = map[string]*tls.Config{}
	for who, c := range a.clients {
		callers[who] = c.Transport.(*http.Transport).TLSClientConfig
	}
	return a.url, callers, a.st
}
