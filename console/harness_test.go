package console

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/admin/adminclient"
	"github.com/health-data-connect/hdc/backend/admin/admintest"
	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/pki"
)

// The people of the tests' certificates.
const (
	alice = "alice@example.org" // an operator
	bob   = "bob@example.org"   // an auditor
)

// stack is a real Admin API over a SQLite store, and a console for each
// person, each with a browser signed in.
type stack struct {
	st       store.Store
	consoles map[string]*browser // by person
	tester   *fakeTester         // where the test events go
}

// fakeTester counts the test events it is asked to send, and answers
// that the receiver answered 503.
type fakeTester struct{ sent atomic.Int64 }

func (f *fakeTester) SendTest(context.Context, store.Subscription) webhook.TestResult {
	f.sent.Add(1)
	return webhook.TestResult{EventID: "msg_test", Outcome: "http_503", Status: 503, Duration: 1500 * time.Millisecond}
}

// browser is a console served over HTTP and a client with its session
// cookie, as a signed-in browser.
type browser struct {
	t     *testing.T
	url   string
	token string
	http  *http.Client
	logs  *observer.ObservedLogs
	srv   *Server
}

func newStack(t *testing.T) *stack {
	t.Helper()
	return newStackWith(t, trail.Config{})
}

// newStackWith is newStack whose audit trail verifies against cfg.
func newStackWith(t *testing.T, cfg trail.Config) *stack {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return newStackOn(t, st, cfg)
}

// newStackOn is newStackWith over the store st.
func newStackOn(t *testing.T, st store.Store, cfg trail.Config) *stack {
	t.Helper()
	hop := t.TempDir()
	if err := pki.InitDir(hop, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	for _, l := range []pki.Leaf{{Role: pki.Operator, Name: alice}, {Role: pki.Auditor, Name: bob}} {
		if _, err := pki.IssueFromDir(hop, l, time.Hour, false); err != nil {
			t.Fatal(err)
		}
	}
	s := &stack{st: st, consoles: map[string]*browser{}, tester: &fakeTester{}}
	svc := admin.New(st, identity.New(st, 1), keyadmin.New(st), admin.WithTrail(trail.New(st, cfg)),
		admin.WithTests(webhook.NewTestEvents(st, func(sub store.Subscription) store.Subscription { return sub }, s.tester, nil)))
	apiURL := admintest.Serve(t, svc, admin.HandlerConfig{Idempotency: st, DenyList: admin.NewDenyList(st, admin.DenyListTTL)}, hop)
	for _, who := range []string{alice, bob} {
		cfg, err := pki.ClientTLS(filepath.Join(hop, who+".pem"), filepath.Join(hop, who+"-key.pem"), filepath.Join(hop, pki.CAFile))
		if err != nil {
			t.Fatal(err)
		}
		c, err := adminclient.New([]string{apiURL}, cfg, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		s.consoles[who] = serve(t, c)
	}
	return s
}

// testHandover is what the tests' consoles complete the credentials
// files they hand over with.
var testHandover = Handover{BaseURL: "https://api.example.org",
	EdgeCA: "-----BEGIN CERTIFICATE-----\nMIIBtestauthority\n-----END CERTIFICATE-----\n"}

// serve serves a console over api, and returns a browser not signed in
// yet.
func serve(t *testing.T, api adminapi.API) *browser {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	token := Token()
	console := newServer(api, token, zap.New(core), hostsOf(DefaultListen), testHandover)
	srv := httptest.NewServer(console)
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, url: srv.URL, token: token, logs: logs, srv: console, http: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// signIn exchanges the token for the session cookie.
func (b *browser) signIn() *browser {
	b.t.Helper()
	if status, _ := b.get("/login?token=" + b.token); status != http.StatusSeeOther {
		b.t.Fatalf("sign in: %d", status)
	}
	return b
}

// get returns the status and body of path.
func (b *browser) get(path string) (int, string) {
	b.t.Helper()
	resp, err := b.http.Get(b.url + path)
	if err != nil {
		b.t.Fatal(err)
	}
	return read(b.t, resp)
}

// answer is the console's answer to a request: its status, its body, and
// where a 303 sends the browser.
type answer struct {
	status         int
	body, location string
}

// post posts form to path, as a same-origin page's form does.
func (b *browser) post(path string, form url.Values) answer {
	b.t.Helper()
	req, err := http.NewRequestWithContext(b.t.Context(), http.MethodPost, b.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := b.http.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	location := resp.Header.Get("Location")
	status, body := read(b.t, resp)
	return answer{status: status, body: body, location: location}
}

// submit posts form to path as the console's own form does: with the
// session's CSRF token and a new one-time key, unless form names them.
func (b *browser) submit(path string, form url.Values) answer {
	b.t.Helper()
	f := url.Values{"csrf": {b.sessionCSRF()}, "once": {formKey()}}
	for k, v := range form {
		f[k] = v
	}
	return b.post(path, f)
}

// follow reads the page a change's 303 sends to, as the browser does.
func (b *browser) follow(a answer) answer {
	b.t.Helper()
	if a.status != http.StatusSeeOther || !strings.HasPrefix(a.location, "/") {
		b.t.Fatalf("the change answered %d (Location %q), want 303 to a page of the console:\n%s", a.status, a.location, a.body)
	}
	status, body := b.get(a.location)
	return answer{status: status, body: body}
}

// csrf returns the CSRF token of the session, read from a page's form.
func (b *browser) csrf() string {
	b.t.Helper()
	_, body := b.get("/clients")
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		b.t.Fatal("no CSRF token on the clients page")
	}
	return m[1]
}

// sessionCSRF returns the CSRF token of the console's one session.
func (b *browser) sessionCSRF() string {
	b.srv.sessions.mu.Lock()
	defer b.srv.sessions.mu.Unlock()
	for _, s := range b.srv.sessions.byID {
		return s.csrf
	}
	b.t.Fatal("no session")
	return ""
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func read(t *testing.T, resp *http.Response) (int, string) {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
