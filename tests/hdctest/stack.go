package hdctest

import (
	"bufio"
	"bytes"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// Stack is the real system on loopback: hdc-backend and hdc-edge (running
// the repository's Caddyfile) as separate processes, managed with the hdc
// CLI as an operator would.
type Stack struct {
	T        *testing.T
	Dir      string
	Edge     string // http://127.0.0.1:port
	Internal string // the backend's internal listener
	Hop      string // the directory of the hop's certificates
	// AdminSocket is the unix socket of the edge's admin API (mode 0600,
	// as every deployment shape has it); AdminClient speaks to it.
	AdminSocket string
	Metrics     string // the edge's metrics listener: http://127.0.0.1:port
	// EdgeMetrics are the metrics listeners of the edges that must hold a
	// key before a client of the stack uses it (WaitForKey): the edge's,
	// or a cluster's edges'.
	EdgeMetrics []string
	// registry is the key registry file of an edge that reads one
	// (site.registryFile); empty: the edge looks keys up in the backend.
	registry string
	// backends are the public listeners the stack's edges balance over.
	backends []string
	// backend is the stack's backend process, which startBackend starts
	// on the listeners the stack holds.
	backend      *Process
	startBackend func() *Process
	Keeper       string   // the URL of the keeper of the stack's secrets
	Env          []string // the operator's environment for hdc commands
	Procs        []*Process
	HTTP         *http.Client
	// roots trusts the edge's certificate, on a TLS site (tlsSite).
	Roots *x509.CertPool
	// creds are the credentials the test handled: no log of the stack
	// may carry one.
	Creds Credentials
}

// Process is a running binary whose output is kept for failure reports.
type Process struct {
	Name string
	Cmd  *exec.Cmd
	Out  *SyncBuffer
	Done chan struct{}
}

type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// For returns a view of the stack for t, a parallel subtest of the
// stack's test: the same processes, data and ledger of credentials, its
// failures t's.
func (s *Stack) For(t *testing.T) *Stack {
	s.Creds.ledger()
	v := *s
	v.T = t
	return &v
}

// StartStack starts a backend and an edge on fresh loopback ports and data.
// extraEnv is added to the backend's environment.
func StartStack(t *testing.T, extraEnv ...string) *Stack {
	t.Helper()
	return StartStackEnv(t, extraEnv, nil)
}

// StartFileStack is startStack with the edge reading its keys from a
// registry file, as a standalone edge does.
func StartFileStack(t *testing.T, extraEnv ...string) *Stack {
	t.Helper()
	at := PlainSite(t)
	at.RegistryFile = true
	return StartStackSite(t, at, extraEnv, nil)
}

// StartStackEnv is startStack with backendEnv added to the backend's
// environment and edgeEnv to the edge's.
func StartStackEnv(t *testing.T, backendEnv, edgeEnv []string) *Stack {
	t.Helper()
	return StartStackSite(t, PlainSite(t), backendEnv, edgeEnv)
}

// site is where the edge of a stack serves: its base URL, what it sets of
// the reference Caddyfile's HDC_SITE and HDC_BIND, and the sockets it is
// handed (fd/3 on).
type site struct {
	base  string
	env   []string
	files []*os.File
	// probe, if set, is the client that waits for the edge to answer (a
	// TLS site's, before its root certificate exists); ready, if set, runs
	// once it does.
	probe *http.Client
	ready func(*Stack)
	// from, if set, is a directory whose backend data (backend/) and key
	// registry (keys.json) the stack starts with a copy of: an earlier
	// version's, say.
	From string
	// StandIns are more backends' public listeners the edge balances
	// over, after the stack's own (the reference Caddyfile's HDC_BACKEND):
	// stand-ins of a test's that answer as a backend may.
	StandIns []string
	// StandInsOnly has the edge balance over the stand-ins alone: the
	// stack's own backend then serves only the edge's own requests, the
	// JWKS and the key plane, on its internal listener.
	StandInsOnly bool
	// registryFile has the edge read its keys from a registry file
	// (HDC_KEY_REGISTRY), as a standalone edge does, and the operator's
	// hdc keys change that file; else the keys are in the backend's
	// database, as the reference deployment keeps them.
	RegistryFile bool
}

// PlainSite is plain HTTP on a socket the edge inherits, so that no port
// is closed and reused.
func PlainSite(t *testing.T) site {
	sock, addr := testkit.ListenFile(t)
	return site{base: "http://" + addr, env: []string{"HDC_SITE=http://", "HDC_BIND=fd/3"}, files: []*os.File{sock}}
}

// StartStackSite is startStackEnv with the edge serving at site.
func StartStackSite(t *testing.T, at site, backendEnv, edgeEnv []string) *Stack {
	t.Helper()
	backendBin := Binary(t, "hdc-backend")
	dir := t.TempDir()
	// Each process inherits its listening sockets (fd/3, fd/4): no port is
	// closed and reused.
	publicSock, public := testkit.ListenFile(t)
	internalSock, internal := testkit.ListenFile(t)
	metricsSock, metrics := testkit.ListenFile(t)
	if at.From != "" {
		CopyPrivate(t, filepath.Join(at.From, "backend"), filepath.Join(dir, "backend"))
		CopyPrivate(t, filepath.Join(at.From, "keys.json"), filepath.Join(dir, "keys.json"))
	}
	hop := filepath.Join(dir, "tls")
	s := &Stack{T: t, Dir: dir, Edge: at.base, Internal: "https://" + internal, AdminSocket: filepath.Join(dir, "edge-admin.sock"),
		Metrics: "http://" + metrics, EdgeMetrics: []string{"http://" + metrics}, Hop: hop,
		HTTP: &http.Client{Timeout: 5 * time.Minute}}
	s.Creds.ledger() // before any view of the stack copies it (For)
	if at.RegistryFile {
		s.registry = filepath.Join(dir, "keys.json")
	}
	// The keeper of the stack's secrets: a local key, as hdc up makes it
	// (the cluster runs a KMS).
	var err error
	if s.Keeper, err = keeper.CreateKeyFile(filepath.Join(dir, KeeperFile)); err != nil {
		t.Fatal(err)
	}
	s.CheckAnswers() // every answer of the edge against docs/openapi.yaml
	s.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_CACHE_HOME=" + filepath.Join(dir, "cache"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "XDG_DATA_HOME=" + filepath.Join(dir, "share"),
		"HDC_DATA=" + filepath.Join(dir, "backend"), "HDC_KEY_REGISTRY=" + s.registry,
		"HDC_BACKEND_INTERNAL=" + s.Internal, "HDC_LOG_LEVEL=debug",
		// hdc events publish: the publisher's certificate, issued below.
		"HDC_PUBLISHER_CERT=" + filepath.Join(hop, pki.CertFile(pki.Publisher)),
		"HDC_PUBLISHER_KEY=" + filepath.Join(hop, pki.KeyFile(pki.Publisher)), "HDC_HOP_CA=" + filepath.Join(hop, pki.CAFile)}
	s.Env = append(s.Env, "HDC_KEEPER="+s.Keeper)
	// A registry must exist before the edge starts: an operator creates it
	// with the first key; here an empty one, unless the stack starts from
	// one.
	if s.registry != "" && at.From == "" {
		if err := os.WriteFile(s.registry, []byte(`{"keys":[]}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The hop's certificates, as an operator makes them: the backend's,
	// the edge's, and those of the internal listener's other roles.
	s.HDC(nil, "tls", "init", "--dir", hop)
	for _, role := range []pki.Role{pki.Publisher, pki.Parser, pki.Scraper} {
		s.HDC(nil, "tls", "issue", "--role", string(role), "--dir", hop)
	}
	for _, role := range []pki.Role{pki.Backend, pki.Edge, pki.Publisher, pki.Parser, pki.Scraper} {
		s.Creds.NotePEMFile(t, "a private key of the hop", filepath.Join(hop, pki.KeyFile(role)))
	}
	s.Creds.NotePEMFile(t, "a private key of the hop", filepath.Join(hop, pki.CAKeyFile))
	s.startBackend = func() *Process {
		return s.Start("hdc-backend", backendBin, nil, append(append([]string{"HDC_LISTEN=fd/3", "HDC_INTERNAL_LISTEN=fd/4"},
			HopEnv(hop, "backend")...), backendEnv...), publicSock, internalSock)
	}
	s.backend = s.startBackend()
	s.waitForBackend()
	s.backends = append([]string{public}, at.StandIns...)
	if at.StandInsOnly {
		s.backends = at.StandIns
	}
	s.startEdge("hdc-edge", "edge", at, s.AdminSocket, metricsSock, edgeEnv)
	if at.ready != nil {
		at.ready(s)
	}
	return s
}

// waitForBackend waits until the stack's backend answers its readiness
// check.
func (s *Stack) waitForBackend() {
	s.T.Helper()
	s.WaitFor("the backend", func() bool {
		resp, err := s.InternalClient("").Get(s.Internal + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// KillBackend kills the stack's backend with SIGKILL, as a crash would,
// and starts it again on the same listeners (the stack holds them, so no
// port is closed and reused) and the same data; it waits until the new
// process is ready.
func (s *Stack) KillBackend() {
	s.T.Helper()
	if err := s.backend.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		s.T.Fatal(err)
	}
	<-s.backend.Done
	s.Procs = slices.DeleteFunc(s.Procs, func(p *Process) bool { return p == s.backend })
	s.backend = s.startBackend()
	s.waitForBackend()
}

// startEdge starts an edge of the stack's in front of its backends,
// serving at: the process name, the name of its hop certificate, the
// unix socket of its admin API, the listener of its metrics and more
// environment. It waits until the edge answers.
func (s *Stack) startEdge(name, cert string, at site, admin string, metricsSock *os.File, env []string) {
	s.T.Helper()
	metricsFD := fmt.Sprintf("HDC_METRICS_BIND=fd/%d", 3+len(at.files))
	// The fleet's Redis (scripts/redis.sh), as a fleet's edges count in; a
	// test may name none (HDC_RATELIMIT_REDIS=) to count in memory.
	s.Start(name, Binary(s.T, "hdc-edge"), []string{"run", "--config", filepath.Join(RepoRoot, "Caddyfile")}, append(append(
		append(append([]string{"HDC_EDGE_ADMIN=" + AdminAddress(admin), metricsFD, "HDC_BACKEND=" + strings.Join(s.backends, " "), "HDC_UPLOAD_MAX_BODY=128MiB"},
			s.SharedRedisEnv()...), at.env...),
		HopEnv(s.Hop, cert)...), env...), append(at.files, metricsSock)...)
	probe := s.HTTP
	if at.probe != nil {
		probe = at.probe
	}
	s.WaitFor(name, func() bool {
		resp, err := probe.Get(at.base + "/no-such-route")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusNotFound && resp.Header.Get("Content-Type") == "application/problem+json"
	})
}

// StartEdge starts one more edge in front of the stack's backends, as an
// operator adds an edge to a fleet: with a hop certificate of its own
// (hdc tls issue --role edge --name name), its keys from the key plane,
// plain HTTP on a socket of its own. It returns the edge's base URL and
// its metrics listener's. WaitForKey waits for it too, and its answers
// are checked as the stack's edge's are.
func (s *Stack) StartEdge(name string) (base, metrics string) {
	s.T.Helper()
	return s.StartEdgeEnv(name)
}

// StartEdgeEnv is StartEdge with more environment, as the stack's first
// edge was given (StartStackEnv's edgeEnv): a fleet's edges share their
// settings.
func (s *Stack) StartEdgeEnv(name string, env ...string) (base, metrics string) {
	s.T.Helper()
	s.HDC(nil, "tls", "issue", "--role", string(pki.Edge), "--name", name, "--dir", s.Hop)
	s.Creds.NotePEMFile(s.T, "a private key of the hop", filepath.Join(s.Hop, name+"-key.pem"))
	at := PlainSite(s.T)
	metricsSock, metricsAddr := testkit.ListenFile(s.T)
	s.startEdge("hdc-"+name, name, at, filepath.Join(s.Dir, name+"-admin.sock"), metricsSock, env)
	metrics = "http://" + metricsAddr
	s.EdgeMetrics = append(s.EdgeMetrics, metrics)
	s.HTTP.Transport.(*answerCheck).AddEdge(at.base)
	return at.base, metrics
}

// keyring finds the stack's keys as its edge does: in the registry file,
// or in the backend's key plane.
func (s *Stack) keyring() *Keyring {
	var plane func(kid string) (string, bool)
	var once sync.Once
	return &Keyring{Path: s.registry, keeper: func() string { return s.Keeper }, Plane: func(kid string) (string, bool) {
		if s.Internal == "" {
			return "", false
		}
		once.Do(func() { plane = PlaneKeys(s.Hop, s.Internal) }) // one client, its connections kept
		return plane(kid)
	}}
}

// InternalClient returns a client of the backend's internal listener
// presenting role's certificate of the stack's hop (none for "").
func (s *Stack) InternalClient(role pki.Role) *http.Client {
	s.T.Helper()
	return HopClient(s.T, s.Hop, role)
}

// HopClient returns a client of a backend whose hop's files are in dir,
// presenting role's certificate (none for "").
func HopClient(t testing.TB, dir string, role pki.Role) *http.Client {
	t.Helper()
	var cert, key string
	if role != "" {
		cert, key = filepath.Join(dir, pki.CertFile(role)), filepath.Join(dir, pki.KeyFile(role))
	}
	cfg, err := pki.ClientTLS(cert, key, filepath.Join(dir, pki.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: cfg}}
}

// HopEnv is the environment of a process whose hop certificate in dir is
// name's: a role's own ("edge" or "backend", as hdc tls init makes them),
// or one hdc tls issue --name made.
func HopEnv(dir, name string) []string {
	return []string{"HDC_HOP_CA=" + filepath.Join(dir, "ca.pem"),
		"HDC_HOP_CERT=" + filepath.Join(dir, name+".pem"), "HDC_HOP_KEY=" + filepath.Join(dir, name+"-key.pem")}
}

// Start runs a binary of the stack, handing it files as fd/3, fd/4, …; it
// is stopped with SIGTERM at cleanup.
func (s *Stack) Start(name, bin string, args, env []string, files ...*os.File) *Process {
	s.T.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append([]string{}, s.Env...), env...)
	cmd.ExtraFiles = files
	out := &SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		s.T.Fatal(err)
	}
	p := &Process{Name: name, Cmd: cmd, Out: out, Done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.Done) }()
	s.Procs = append(s.Procs, p)
	// The test that started the process answers for it at cleanup, even
	// when s.t is by then a subtest that has ended.
	t := s.T
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.Done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-p.Done
		}
		if name == "hdc-backend" {
			s.Creds.NoteSigningKeys(t, filepath.Join(s.Dir, "backend", "hdc.db"), s.Keeper)
		}
		s.Creds.Scan(t, name, out.String())
		if t.Failed() {
			t.Logf("--- %s output (last 4 KiB):\n%s", name, Tail(out.String(), 4096))
		}
	})
	return p
}

func Tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// WaitFor polls ready until it holds, failing the test after a minute or
// when a process of the stack has exited.
func (s *Stack) WaitFor(what string, ready func() bool) {
	s.T.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ready() {
		for _, p := range s.Procs {
			select {
			case <-p.Done:
				s.T.Fatalf("%s exited while waiting for %s:\n%s", p.Name, what, Tail(p.Out.String(), 4096))
			default:
			}
		}
		if time.Now().After(deadline) {
			s.T.Fatalf("%s did not become ready", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// HDC runs the CLI as the operator, and decodes its JSON output into v.
func (s *Stack) HDC(v any, args ...string) {
	s.T.Helper()
	out, errOut, err := s.HDCRun(args...)
	if err != nil {
		s.T.Fatal(err)
	}
	s.Creds.NoteJSON([]byte(out))
	s.Creds.Scan(s.T, "hdc "+args[0], errOut)
	if v != nil {
		if err := json.Unmarshal([]byte(out), v); err != nil {
			s.T.Fatalf("hdc %s printed %q", strings.Join(args, " "), out)
		}
	}
}

// HDCRun runs the CLI as the operator, like hdc, but leaves its exit
// status to the caller.
func (s *Stack) HDCRun(args ...string) (stdout, stderr string, err error) {
	s.T.Helper()
	cmd := exec.Command(Binary(s.T, "hdc"), args...)
	cmd.Env = s.Env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if err != nil {
		err = fmt.Errorf("hdc %s: %w: %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), errOut.String(), err
}

// APIClient is a client of the API as an operator provisions one: an
// identity in a workspace and an encryption key in the edge's registry.
type APIClient struct {
	ID, Secret, Workspace string
	Kid, Key              string
	// Enc is the key's content encryption: "" for A128CBC-HS256, or
	// encGCM (Key is then the JWK's k).
	Enc string
	// JWK is the key as hdc keys add printed it, a JSON Web Key, which the
	// JOSE clients import as it is; "" for a key made otherwise.
	JWK string
}

// NewClient creates a client in workspace and gives it an encryption key.
func (s *Stack) NewClient(workspace string) *APIClient {
	s.T.Helper()
	return s.NewClientEnc(workspace, "")
}

// NewClientEnc creates a client in workspace and gives it an encryption
// key of enc ("" for the default, A128CBC-HS256), with more flags of hdc
// keys add.
func (s *Stack) NewClientEnc(workspace, enc string, flags ...string) *APIClient {
	s.T.Helper()
	var c struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		WorkspaceID  string `json:"workspace_id"`
	}
	s.HDC(&c, "clients", "create", "--workspace", workspace)
	var k struct {
		Kid    string          `json:"kid"`
		Secret string          `json:"secret"`
		Enc    string          `json:"enc"`
		JWK    json.RawMessage `json:"jwk"`
	}
	args := append([]string{"keys", "add", "--client", c.ClientID}, flags...)
	if enc != "" {
		args = append(args, "--enc", enc)
	}
	s.HDC(&k, args...)
	var jwk struct{ Kty, Kid, Enc, K string }
	if err := json.Unmarshal(k.JWK, &jwk); err != nil || jwk.Kty != "oct" || jwk.Kid != k.Kid || jwk.Enc != k.Enc || jwk.K == "" ||
		enc == EncGCM && jwk.K != k.Secret {
		s.T.Fatalf("hdc keys add --enc %q printed the key as %s", enc, k.JWK)
	}
	s.WaitForKey(k.Kid)
	return &APIClient{ID: c.ClientID, Secret: c.ClientSecret, Workspace: c.WorkspaceID, Kid: k.Kid, Key: k.Secret, Enc: enc, JWK: string(k.JWK)}
}

// WaitForKey waits until the stack's edges hold the key kid, as hdc keys
// just made it: an edge reading a registry file has loaded the file; an
// edge of the key plane has applied the change that made it, before which
// its kid filter refuses the kid. A client takes a new key from then on.
func (s *Stack) WaitForKey(kid string) {
	s.T.Helper()
	if s.registry != "" {
		s.waitForRegistry()
		return
	}
	if len(s.EdgeMetrics) == 0 {
		return // an operator's stack of no edge
	}
	seq := KeySeq(s.T, s, kid)
	testkit.Eventually(s.T, time.Minute, "the edges to apply the change of key "+kid, func() bool {
		for _, m := range s.EdgeMetrics {
			if ScrapeMetric(s.HTTP, m+"/metrics", "hdc_edge_key_feed_applied_sequence") < seq {
				return false
			}
		}
		return true
	})
}

// KeySeq returns the number of the key plane's change that made the key
// kid as it is now, asking the stack's backend as an edge does.
func KeySeq(t testing.TB, s *Stack, kid string) int {
	t.Helper()
	resp, err := s.InternalClient(pki.Edge).Get(s.Internal + strings.Replace(contract.PathKey, "{kid}", kid, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var k contract.ClientKey
	if err := json.NewDecoder(resp.Body).Decode(&k); err != nil || k.Seq == 0 {
		t.Fatalf("the key plane's answer for %s: %v", kid, err)
	}
	return int(k.Seq)
}

// waitForRegistry waits until the stack's edge has loaded as many keys as
// the registry file holds: it reads the file every 2 s.
func (s *Stack) waitForRegistry() {
	s.T.Helper()
	if s.Metrics == "" || s.registry == "" {
		return // the operator of a cluster, whose edges run without an admin API; or keys the edge looks up
	}
	data, err := os.ReadFile(s.registry)
	if err != nil {
		s.T.Fatal(err)
	}
	var file struct{ Keys []json.RawMessage }
	if err := json.Unmarshal(data, &file); err != nil {
		s.T.Fatal(err)
	}
	gauge := regexp.MustCompile(`(?m)^hdc_edge_key_registry_keys\{[^}]*\} (\d+)$`)
	s.WaitFor("the edge to load the registry", func() bool {
		resp, err := s.HTTP.Get(s.Metrics + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		text, _ := io.ReadAll(resp.Body)
		loaded := 0
		for _, m := range gauge.FindAllSubmatch(text, -1) {
			n, _ := strconv.Atoi(string(m[1]))
			loaded += n
		}
		return loaded == len(file.Keys)
	})
}

// Response is an HTTP answer read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// sealed is set when body was decrypted from an envelope, whose media
	// type (application/json) is not the plaintext's.
	sealed bool
}

func (r *Response) String() string { return fmt.Sprintf("%d %s", r.Status, Tail(string(r.Body), 600)) }

// JSON decodes the body; it fails the test if it is not JSON.
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("not a JSON object: %s", r)
	}
	return m
}

// Do sends a request to the edge.
func (s *Stack) Do(method, path string, body []byte, header map[string]string) *Response {
	s.T.Helper()
	r, err := s.Request(s.Edge, method, path, body, header)
	if err != nil {
		s.T.Fatal(err)
	}
	return r
}

// Request sends a request to the edge at base (s.edge, or another edge of
// the deployment s operates), noting the credentials it carries and gets.
// It returns its failures rather than failing the test, so that it may
// run off the test's goroutine.
func (s *Stack) Request(base, method, path string, body []byte, header map[string]string) (*Response, error) {
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body == nil {
		req.Body, req.ContentLength = nil, 0
	}
	for k, v := range header {
		req.Header[k] = []string{v} // as given: a test may send a name in lower case
	}
	s.Plant(req)
	s.Creds.noteBearer(req.Header.Get("Authorization"))
	s.Creds.NoteJSON(body)
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	s.Creds.NoteJSON(b)
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// plantedHeader is a header the backend does not read, set on every
// request of the stack's client to a value of a client secret's shape:
// no log line, at any level, may carry it, as none may carry a retrieve's
// identifier (a query value that names a record; other query values, a
// client id searched for, say, are ids the logs name anyway).
const plantedHeader = "X-Api-Key"

// Plant sets plantedHeader on req and notes its identifier query values
// as values no log may carry.
func (s *Stack) Plant(req *http.Request) {
	if req.Header.Get(plantedHeader) == "" {
		req.Header.Set(plantedHeader, "hdc_cs_planted-in-an-unread-header")
	}
	s.Creds.addUnlogged("a retrieve's identifier", req.URL.Query()["identifier"]...)
}

// Lines returns a reader's lines as they come, for following a process's
// output.
func Lines(r io.Reader) <-chan string {
	ch := make(chan string, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// KeeperFile is the local keeper's key file, beside the registry, in the
// test stacks as in hdc up's data directory.
const KeeperFile = "keeper.key"

// CopyPrivate copies the file or tree at from to to, owner-only as the
// programs keep their data (git keeps no such modes).
func CopyPrivate(t *testing.T, from, to string) {
	t.Helper()
	fi, err := os.Stat(from)
	switch {
	case err != nil:
	case fi.IsDir():
		err = os.CopyFS(to, os.DirFS(from))
	default:
		var data []byte
		if data, err = os.ReadFile(from); err == nil {
			err = os.WriteFile(to, data, 0o600)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(to, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(path, 0o700)
		}
		return os.Chmod(path, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// ScrapeMetric reads the value of a series (a name, with its labels if it
// has any) from the metrics at url, -1 when it cannot.
func ScrapeMetric(client *http.Client, url, series string) int {
	resp, err := client.Get(url)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			if n, err := strconv.ParseFloat(v, 64); err == nil {
				return int(n)
			}
		}
	}
	return -1
}

// registryReads is what the edge has read of its registry file: the
// contents it loaded, the distinct contents it refused (each logged once),
// and how many times it read the file.
type registryReads struct{ loaded, refused, reads int }

func (s *Stack) registryReads() registryReads {
	metric := func(result string) int {
		return ScrapeMetric(s.HTTP, s.Metrics+"/metrics", `hdc_edge_key_registry_reloads_total{result="`+result+`"}`)
	}
	r := registryReads{loaded: metric("changed"), refused: strings.Count(s.Output("hdc-edge"), "key registry not reloaded")}
	for _, result := range []string{"changed", "unchanged", "rejected"} {
		r.reads += max(metric(result), 0)
	}
	return r
}

// RegistryChanged runs change, which writes the stack's registry file, and
// waits until the edge has read what it wrote: loaded it, refused it (and
// kept what it had), or read the file twice since, when change wrote what
// the edge holds already. The edge reads the file every 2 s.
func (s *Stack) RegistryChanged(change func()) {
	s.T.Helper()
	before := s.registryReads()
	change()
	written := s.registryReads() // a read started before this may have missed the change
	s.WaitFor("the edge to read the changed registry", func() bool {
		now := s.registryReads()
		return now.loaded > before.loaded || now.refused > before.refused || now.reads >= written.reads+2
	})
}
