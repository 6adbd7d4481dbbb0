package backend

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/auth"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// harness runs a real Server on loopback listeners and plays the edge:
// it verifies access tokens against the server's JWKS and forwards the
// identity headers.
type harness struct {
	t        testing.TB
	srv      *Server
	cfg      Config
	public   string
	internal string
	// http is the client of every request: with the hop's TLS, it presents
	// the edge's certificate, and roles those of the internal listener's
	// other roles.
	http  *http.Client
	roles map[contract.Role]*http.Client
	// stop cancels Serve and returns what it returned.
	stop func() error
}

// testKeeper is the keeper of every server the tests start, so that two
// servers over one store share it.
var testKeeper = testkit.KeeperURL()

// start runs a server with test settings, changed by mutate.
func start(t testing.TB, mutate func(*Config)) *harness {
	t.Helper()
	return startLogged(t, zaptest.NewLogger(t), mutate)
}

// startLogged is start with the server logging to log.
func startLogged(t testing.TB, log *zap.Logger, mutate func(*Config)) *harness {
	t.Helper()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.Keeper = testKeeper
	cfg.ShutdownTimeout = 5 * time.Second
	if mutate != nil {
		mutate(&cfg)
	}
	srv, err := New(t.Context(), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	in, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, pub, in) }()
	stop := sync.OnceValue(func() error {
		cancel()
		return <-done
	})
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	h := &harness{t: t, srv: srv, cfg: cfg, stop: stop, http: http.DefaultClient,
		public: "http://" + pub.Addr().String(), internal: "http://" + in.Addr().String()}
	if cfg.HopCA != "" {
		dir := filepath.Dir(cfg.HopCA)
		h.public, h.internal = "https://"+pub.Addr().String(), "https://"+in.Addr().String()
		h.http = hopClient(t, dir, pki.Edge)
		h.roles = map[contract.Role]*http.Client{}
		for _, role := range []pki.Role{pki.Publisher, pki.Parser, pki.Scraper} {
			if _, err := pki.IssueFromDir(dir, pki.Leaf{Role: role}, time.Hour, true); err != nil {
				t.Fatal(err)
			}
			h.roles[contract.Role(role)] = hopClient(t, dir, role)
		}
	}
	return h
}

// internalRoles are the roles of the internal listener's routes, by path.
var internalRoles = map[string]contract.Role{
	contract.PathEvents: contract.RolePublisher, contract.PathMetrics: contract.RoleScraper,
	"/resources": contract.RoleParser, // the end of contract.PathResources
}

// clientFor returns the client of a request for url: on the internal
// listener with the hop's TLS, the one of the route's role, as the
// platform's services have them.
func (h *harness) clientFor(url string) *http.Client {
	if h.roles != nil && strings.HasPrefix(url, h.internal) {
		for suffix, role := range internalRoles {
			if strings.HasSuffix(url, suffix) {
				return h.roles[role]
			}
		}
	}
	return h.http
}

// withHop gives the server the hop's mutual TLS, with a new authority.
func withHop(t *testing.T) func(*Config) {
	dir := filepath.Join(t.TempDir(), "tls")
	if err := pki.InitDir(dir, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	return func(c *Config) {
		c.HopCA = filepath.Join(dir, pki.CAFile)
		c.HopCert, c.HopKey = filepath.Join(dir, pki.CertFile(pki.Backend)), filepath.Join(dir, pki.KeyFile(pki.Backend))
	}
}

// hopClient returns a client of the hop that trusts the authority of dir
// and presents role's certificate from it (none for an empty role).
func hopClient(t testing.TB, dir string, role pki.Role) *http.Client {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(dir, pki.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cfg := &tls.Config{RootCAs: pool, ServerName: contract.BackendServerName}
	if role != "" {
		cert, err := tls.LoadX509KeyPair(filepath.Join(dir, pki.CertFile(role)), filepath.Join(dir, pki.KeyFile(role)))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	return &http.Client{Transport: tr, Timeout: time.Minute}
}

// response is a completed exchange.
type response struct {
	*http.Response
	body []byte
}

func (r response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
}

// newRequest makes a request with headers (names and values alternating)
// and, to the public listener, the hop headers the edge sets on every
// request, unless headers name their own.
func (h *harness) newRequest(method, url string, body io.Reader, headers ...string) *http.Request {
	h.t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		h.t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	if strings.HasPrefix(url, h.public) {
		for name, value := range map[string]string{contract.HeaderClientIP: "127.0.0.1", contract.HeaderRequestID: uuid.NewString()} {
			if len(req.Header.Values(name)) == 0 {
				req.Header.Set(name, value)
			}
		}
	}
	return req
}

// do sends a request; headers alternate names and values.
func (h *harness) do(method, url string, body io.Reader, headers ...string) response {
	h.t.Helper()
	req := h.newRequest(method, url, body, headers...)
	res, err := h.clientFor(url).Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return response{res, b}
}

// postJSON posts a JSON body to the public listener.
func (h *harness) postJSON(path string, body any, headers ...string) response {
	h.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case string:
		r = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	return h.do("POST", h.public+path, r, append([]string{"Content-Type", "application/json"}, headers...)...)
}

// client creates a client in workspace.
func (h *harness) client(workspace string) identity.Credentials {
	h.t.Helper()
	c, err := h.srv.Identity().CreateClient(context.Background(), audittest.Operator, workspace, identity.Meta{})
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// login logs c in, with sharingKey unless empty, and wants success.
func (h *harness) login(c identity.Credentials, sharingKey string) auth.TokenPair {
	h.t.Helper()
	body := map[string]string{"client_id": c.ClientID, "client_secret": c.ClientSecret}
	if sharingKey != "" {
		body["sharing_key"] = sharingKey
	}
	res := h.postJSON(contract.PathLogin, body)
	if res.StatusCode != 200 {
		h.t.Fatalf("login: %d %s", res.StatusCode, res.body)
	}
	var pair auth.TokenPair
	res.json(h.t, &pair)
	return pair
}

// claims are an access token's claims.
type claims struct {
	jwt.Claims
	WS      string `json:"ws"`
	Grant   string `json:"grant"`
	Session string `json:"sid"`
}

// verify checks an access token as the edge does: EdDSA only, a kid from
// the JWKS, issuer, audience, and expiry unless allowExpired.
func (h *harness) verify(token string, allowExpired bool) claims {
	h.t.Helper()
	res := h.do("GET", h.internal+contract.PathJWKS, nil)
	var set jose.JSONWebKeySet
	res.json(h.t, &set)
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		h.t.Fatalf("access token: %v", err)
	}
	keys := set.Key(tok.Headers[0].KeyID)
	if len(keys) != 1 {
		h.t.Fatalf("kid %q is not in the JWKS", tok.Headers[0].KeyID)
	}
	var c claims
	if err := tok.Claims(keys[0].Key, &c); err != nil {
		h.t.Fatalf("signature: %v", err)
	}
	now := time.Now()
	if allowExpired {
		now = c.IssuedAt.Time()
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: h.cfg.Issuer, AnyAudience: jwt.Audience{h.cfg.Audience}, Time: now}, time.Minute); err != nil {
		h.t.Fatalf("claims: %v", err)
	}
	return c
}

// as returns the headers the edge forwards for a verified access token.
func (h *harness) as(pair auth.TokenPair) []string {
	h.t.Helper()
	c := h.verify(pair.AccessToken, false)
	headers := []string{
		contract.HeaderClientID, c.Subject, contract.HeaderWorkspaceID, c.WS, contract.HeaderTokenID, c.ID,
		"Authorization", "Bearer " + pair.AccessToken,
	}
	if c.Grant != "" {
		headers = append(headers, contract.HeaderGrantID, c.Grant)
	}
	if c.Session != "" {
		headers = append(headers, contract.HeaderSessionID, c.Session)
	}
	return headers
}

// wantProblem asserts a problem+json answer with status and code.
func wantProblem(t *testing.T, res response, status int, code string) problem.Problem {
	t.Helper()
	return testkit.WantProblem(t, res.StatusCode, res.Header, res.body, status, code)
}
