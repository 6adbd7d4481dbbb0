package tests

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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// stack is the real system on loopback: hdc-backend and hdc-edge (running
// the repository's Caddyfile) as separate processes, managed with the hdc
// CLI as an operator would.
type stack struct {
	t        *testing.T
	dir      string
	edge     string // http://127.0.0.1:port
	internal string // the backend's internal listener
	hop      string // the directory of the hop's certificates
	admin    string // the edge's admin API
	// registry is the key registry file of an edge that reads one
	// (site.registryFile); empty: the edge looks keys up in the backend.
	registry string
	keeper   string   // the URL of the keeper of the stack's secrets
	env      []string // the operator's environment for hdc commands
	procs    []*process
	http     *http.Client
	// roots trusts the edge's certificate, on a TLS site (tlsSite).
	roots *x509.CertPool
	// creds are the credentials the test handled: no log of the stack
	// may carry one.
	creds credentials
}

// process is a running binary whose output is kept for failure reports.
type process struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startStack starts a backend and an edge on fresh loopback ports and data.
// extraEnv is added to the backend's environment.
func startStack(t *testing.T, extraEnv ...string) *stack {
	t.Helper()
	return startStackEnv(t, extraEnv, nil)
}

// startFileStack is startStack with the edge reading its keys from a
// registry file, as a standalone edge does.
func startFileStack(t *testing.T, extraEnv ...string) *stack {
	t.Helper()
	at := plainSite(t)
	at.registryFile = true
	return startStackSite(t, at, extraEnv, nil)
}

// startStackEnv is startStack with backendEnv added to the backend's
// environment and edgeEnv to the edge's.
func startStackEnv(t *testing.T, backendEnv, edgeEnv []string) *stack {
	t.Helper()
	return startStackSite(t, plainSite(t), backendEnv, edgeEnv)
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
	ready func(*stack)
	// from, if set, is a directory whose backend data (backend/) and key
	// registry (keys.json) the stack starts with a copy of: an earlier
	// version's, say.
	from string
	// registryFile has the edge read its keys from a registry file
	// (HDC_KEY_REGISTRY), as a standalone edge does, and the operator's
	// hdc keys change that file; else the keys are in the backend's
	// database, as the reference deployment keeps them.
	registryFile bool
}

// plainSite is plain HTTP on a socket the edge inherits, so that no port
// is closed and reused.
func plainSite(t *testing.T) site {
	sock, addr := testkit.ListenFile(t)
	return site{base: "http://" + addr, env: []string{"HDC_SITE=http://", "HDC_BIND=fd/3"}, files: []*os.File{sock}}
}

// startStackSite is startStackEnv with the edge serving at site.
func startStackSite(t *testing.T, at site, backendEnv, edgeEnv []string) *stack {
	t.Helper()
	backendBin, edgeBin := binary(t, "hdc-backend"), binary(t, "hdc-edge")
	dir := t.TempDir()
	// Each process inherits its listening sockets (fd/3, fd/4): no port is
	// closed and reused.
	publicSock, public := testkit.ListenFile(t)
	internalSock, internal := testkit.ListenFile(t)
	adminSock, admin := testkit.ListenFile(t)
	if at.from != "" {
		copyPrivate(t, filepath.Join(at.from, "backend"), filepath.Join(dir, "backend"))
		copyPrivate(t, filepath.Join(at.from, "keys.json"), filepath.Join(dir, "keys.json"))
	}
	hop := filepath.Join(dir, "tls")
	s := &stack{t: t, dir: dir, edge: at.base, internal: "https://" + internal, admin: "http://" + admin, hop: hop,
		http: &http.Client{Timeout: 5 * time.Minute}}
	if at.registryFile {
		s.registry = filepath.Join(dir, "keys.json")
	}
	// The keeper of the stack's secrets: a local key, as hdc up makes it
	// (the cluster runs a KMS).
	var err error
	if s.keeper, err = keeper.CreateKeyFile(filepath.Join(dir, keeperFile)); err != nil {
		t.Fatal(err)
	}
	s.checkAnswers() // every answer of the edge against docs/openapi.yaml
	s.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_CACHE_HOME=" + filepath.Join(dir, "cache"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "XDG_DATA_HOME=" + filepath.Join(dir, "share"),
		"HDC_DATA=" + filepath.Join(dir, "backend"), "HDC_KEY_REGISTRY=" + s.registry,
		"HDC_BACKEND_INTERNAL=" + s.internal, "HDC_LOG_LEVEL=debug",
		// hdc events publish: the publisher's certificate, issued below.
		"HDC_PUBLISHER_CERT=" + filepath.Join(hop, pki.CertFile(pki.Publisher)),
		"HDC_PUBLISHER_KEY=" + filepath.Join(hop, pki.KeyFile(pki.Publisher)), "HDC_HOP_CA=" + filepath.Join(hop, pki.CAFile)}
	s.env = append(s.env, "HDC_KEEPER="+s.keeper)
	// A registry must exist before the edge starts: an operator creates it
	// with the first key; here an empty one, unless the stack starts from
	// one.
	if s.registry != "" && at.from == "" {
		if err := os.WriteFile(s.registry, []byte(`{"keys":[]}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The hop's certificates, as an operator makes them: the backend's,
	// the edge's, and those of the internal listener's other roles.
	s.hdc(nil, "tls", "init", "--dir", hop)
	for _, role := range []pki.Role{pki.Publisher, pki.Parser, pki.Scraper} {
		s.hdc(nil, "tls", "issue", "--role", string(role), "--dir", hop)
	}
	for _, role := range pki.Roles {
		s.creds.notePEMFile(t, "a private key of the hop", filepath.Join(hop, pki.KeyFile(role)))
	}
	s.creds.notePEMFile(t, "a private key of the hop", filepath.Join(hop, pki.CAKeyFile))
	s.start("hdc-backend", backendBin, nil, append(append([]string{"HDC_LISTEN=fd/3", "HDC_INTERNAL_LISTEN=fd/4"},
		hopEnv(hop, "backend")...), backendEnv...), publicSock, internalSock)
	s.waitFor("the backend", func() bool {
		resp, err := s.internalClient("").Get(s.internal + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	adminFD := fmt.Sprintf("HDC_EDGE_ADMIN=fd/%d", 3+len(at.files))
	s.start("hdc-edge", edgeBin, []string{"run", "--config", filepath.Join(repoRoot, "Caddyfile")}, append(append(
		append([]string{adminFD, "HDC_BACKEND=" + public, "HDC_UPLOAD_MAX_BODY=128MiB"}, at.env...),
		hopEnv(hop, "edge")...), edgeEnv...), append(at.files, adminSock)...)
	probe := s.http
	if at.probe != nil {
		probe = at.probe
	}
	s.waitFor("the edge", func() bool {
		resp, err := probe.Get(s.edge + "/no-such-route")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusNotFound && resp.Header.Get("Content-Type") == "application/problem+json"
	})
	if at.ready != nil {
		at.ready(s)
	}
	return s
}

// keyring finds the stack's keys as its edge does: in the registry file,
// or in the backend's key plane.
func (s *stack) keyring() *keyring {
	var plane func(kid string) (string, bool)
	var once sync.Once
	return &keyring{path: s.registry, keeper: func() string { return s.keeper }, plane: func(kid string) (string, bool) {
		if s.internal == "" {
			return "", false
		}
		once.Do(func() { plane = planeKeys(s.hop, s.internal) }) // one client, its connections kept
		return plane(kid)
	}}
}

// internalClient returns a client of the backend's internal listener
// presenting role's certificate of the stack's hop (none for "").
func (s *stack) internalClient(role pki.Role) *http.Client {
	s.t.Helper()
	return hopClient(s.t, s.hop, role)
}

// hopClient returns a client of a backend whose hop's files are in dir,
// presenting role's certificate (none for "").
func hopClient(t testing.TB, dir string, role pki.Role) *http.Client {
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

// hopEnv is the environment of role ("edge" or "backend") for the hop's
// certificates in dir, as hdc tls init makes them.
func hopEnv(dir, role string) []string {
	return []string{"HDC_HOP_CA=" + filepath.Join(dir, "ca.pem"),
		"HDC_HOP_CERT=" + filepath.Join(dir, role+".pem"), "HDC_HOP_KEY=" + filepath.Join(dir, role+"-key.pem")}
}

// start runs a binary of the stack, handing it files as fd/3, fd/4, …; it
// is stopped with SIGTERM at cleanup.
func (s *stack) start(name, bin string, args, env []string, files ...*os.File) *process {
	s.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append([]string{}, s.env...), env...)
	cmd.ExtraFiles = files
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	p := &process{name: name, cmd: cmd, out: out, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	s.procs = append(s.procs, p)
	// The test that started the process answers for it at cleanup, even
	// when s.t is by then a subtest that has ended.
	t := s.t
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
		if name == "hdc-backend" {
			s.creds.noteSigningKeys(t, filepath.Join(s.dir, "backend", "hdc.db"), s.keeper)
		}
		s.creds.scan(t, name, out.String())
		if t.Failed() {
			t.Logf("--- %s output (last 4 KiB):\n%s", name, tail(out.String(), 4096))
		}
	})
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// waitFor polls ready until it holds, failing the test after a minute or
// when a process of the stack has exited.
func (s *stack) waitFor(what string, ready func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ready() {
		for _, p := range s.procs {
			select {
			case <-p.done:
				s.t.Fatalf("%s exited while waiting for %s:\n%s", p.name, what, tail(p.out.String(), 4096))
			default:
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s did not become ready", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// hdc runs the CLI as the operator, and decodes its JSON output into v.
func (s *stack) hdc(v any, args ...string) {
	s.t.Helper()
	out, errOut, err := s.hdcRun(args...)
	if err != nil {
		s.t.Fatal(err)
	}
	s.creds.noteJSON([]byte(out))
	s.creds.scan(s.t, "hdc "+args[0], errOut)
	if v != nil {
		if err := json.Unmarshal([]byte(out), v); err != nil {
			s.t.Fatalf("hdc %s printed %q", strings.Join(args, " "), out)
		}
	}
}

// hdcRun runs the CLI as the operator, like hdc, but leaves its exit
// status to the caller.
func (s *stack) hdcRun(args ...string) (stdout, stderr string, err error) {
	s.t.Helper()
	cmd := exec.Command(binary(s.t, "hdc"), args...)
	cmd.Env = s.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if err != nil {
		err = fmt.Errorf("hdc %s: %w: %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), errOut.String(), err
}

// apiClient is a client of the API as an operator provisions one: an
// identity in a workspace and an encryption key in the edge's registry.
type apiClient struct {
	ID, Secret, Workspace string
	Kid, Key              string
	// Enc is the key's content encryption: "" for A128CBC-HS256, or
	// encGCM (Key is then the JWK's k).
	Enc string
}

// newClient creates a client in workspace and gives it an encryption key.
func (s *stack) newClient(workspace string) *apiClient {
	s.t.Helper()
	return s.newClientEnc(workspace, "")
}

// newClientEnc creates a client in workspace and gives it an encryption
// key of enc ("" for the default, A128CBC-HS256), with more flags of hdc
// keys add.
func (s *stack) newClientEnc(workspace, enc string, flags ...string) *apiClient {
	s.t.Helper()
	var c struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		WorkspaceID  string `json:"workspace_id"`
	}
	s.hdc(&c, "clients", "create", "--workspace", workspace)
	var k struct {
		Kid    string `json:"kid"`
		Secret string `json:"secret"`
		Enc    string `json:"enc"`
		JWK    *struct{ Kty, Kid, Alg, Enc, K string }
	}
	args := append([]string{"keys", "add", "--client", c.ClientID}, flags...)
	if enc != "" {
		args = append(args, "--enc", enc)
	}
	s.hdc(&k, args...)
	if enc == encGCM && (k.JWK == nil || k.JWK.Kty != "oct" || k.JWK.Kid != k.Kid || k.JWK.Alg != "dir" || k.JWK.Enc != enc || k.JWK.K != k.Secret) {
		s.t.Fatalf("hdc keys add --enc %s printed the key as %+v", enc, k.JWK)
	}
	s.waitForRegistry()
	return &apiClient{ID: c.ClientID, Secret: c.ClientSecret, Workspace: c.WorkspaceID, Kid: k.Kid, Key: k.Secret, Enc: enc}
}

// waitForRegistry waits until the stack's edge has loaded as many keys as
// the registry file holds: it reads the file every 2 s.
func (s *stack) waitForRegistry() {
	s.t.Helper()
	if s.admin == "" || s.registry == "" {
		return // the operator of a cluster, whose edges run without an admin API; or keys the edge looks up
	}
	data, err := os.ReadFile(s.registry)
	if err != nil {
		s.t.Fatal(err)
	}
	var file struct{ Keys []json.RawMessage }
	if err := json.Unmarshal(data, &file); err != nil {
		s.t.Fatal(err)
	}
	gauge := regexp.MustCompile(`(?m)^hdc_edge_key_registry_keys\{[^}]*\} (\d+)$`)
	s.waitFor("the edge to load the registry", func() bool {
		resp, err := s.http.Get(s.admin + "/metrics")
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

// response is an HTTP answer read whole.
type response struct {
	status int
	header http.Header
	body   []byte
	// sealed is set when body was decrypted from an envelope, whose media
	// type (application/json) is not the plaintext's.
	sealed bool
}

func (r *response) String() string { return fmt.Sprintf("%d %s", r.status, tail(string(r.body), 600)) }

// json decodes the body; it fails the test if it is not JSON.
func (r *response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("not a JSON object: %s", r)
	}
	return m
}

// do sends a request to the edge.
func (s *stack) do(method, path string, body []byte, header map[string]string) *response {
	s.t.Helper()
	r, err := s.request(s.edge, method, path, body, header)
	if err != nil {
		s.t.Fatal(err)
	}
	return r
}

// request sends a request to the edge at base (s.edge, or another edge of
// the deployment s operates), noting the credentials it carries and gets.
// It returns its failures rather than failing the test, so that it may
// run off the test's goroutine.
func (s *stack) request(base, method, path string, body []byte, header map[string]string) (*response, error) {
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
	s.plant(req)
	s.creds.noteBearer(req.Header.Get("Authorization"))
	s.creds.noteJSON(body)
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	s.creds.noteJSON(b)
	return &response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// plantedHeader is a header the backend does not read, set on every
// request of the stack's client to a value of a client secret's shape:
// no log line, at any level, may carry it, as none may carry a retrieve's
// identifier (a query value that names a record; other query values, a
// client id searched for, say, are ids the logs name anyway).
const plantedHeader = "X-Api-Key"

// plant sets plantedHeader on req and notes its identifier query values
// as values no log may carry.
func (s *stack) plant(req *http.Request) {
	if req.Header.Get(plantedHeader) == "" {
		req.Header.Set(plantedHeader, "hdc_cs_planted-in-an-unread-header")
	}
	s.creds.addUnlogged("a retrieve's identifier", req.URL.Query()["identifier"]...)
}

// lines returns a reader's lines as they come, for following a process's
// output.
func lines(r io.Reader) <-chan string {
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

// keeperFile is the local keeper's key file, beside the registry, in the
// test stacks as in hdc up's data directory.
const keeperFile = "keeper.key"

// copyPrivate copies the file or tree at from to to, owner-only as the
// programs keep their data (git keeps no such modes).
func copyPrivate(t *testing.T, from, to string) {
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
