package interop

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// flowRetrieves is the number of retrieves of a flow, all on one
// connection where the client's protocol allows.
const flowRetrieves = 20

// flow is what a client of the matrix did: the status and HTTP version of
// each answer as the client saw them (not every client reports the
// version), the record it uploaded and the last Bundle it retrieved,
// decrypted.
type flow struct {
	Statuses      []int           `json:"statuses"`
	Versions      []string        `json:"versions"`
	CareContextID string          `json:"care_context_id"`
	Bundle        json.RawMessage `json:"bundle"`
}

// transportClient is a client of the matrix.
type transportClient struct {
	name string
	// proto is the protocol the edge's access log must show for every
	// request of the flow; version is what the client must report of
	// every answer, if it reports any.
	proto, version string
	// run runs the flow as c: an encrypted login, an encrypted upload of
	// the file at path, then flowRetrieves encrypted retrieves.
	run func(t *testing.T, s *hdctest.Stack, c *hdctest.APIClient, path string) flow
	// oneEach is set for a client that cannot reuse a connection: each of
	// its requests comes on one of its own.
	oneEach bool
}

// overTLS are the clients of an HTTPS site.
var overTLS = []transportClient{
	{name: "curl, HTTP/1.1", proto: "HTTP/1.1", version: "1.1", run: curlFlow("--http1.1")},
	{name: "curl, HTTP/2", proto: "HTTP/2.0", version: "2", run: curlFlow("--http2")},
	{name: "Go net/http, HTTP/2", proto: "HTTP/2.0", version: "HTTP/2.0", run: goFlow(h2Transport)},
	{name: "quic-go, HTTP/3", proto: "HTTP/3.0", version: "HTTP/3.0", run: goFlow(h3Transport)},
	{name: "JDK HttpClient, defaults", proto: "HTTP/2.0", version: "HTTP_2", run: programFlow("java", "JdkClient.java")},
	{name: "Node fetch", proto: "HTTP/1.1", run: programFlow("node", "fetch_client.mjs")},
	{name: "python httpx, HTTP/2", proto: "HTTP/2.0", version: "HTTP/2", run: programFlow(debianPython, "httpx_client.py")},
}

// overPlainHTTP are the clients of a plain HTTP site. A client asking to
// upgrade to h2c is answered over HTTP/1.1.
var overPlainHTTP = []transportClient{
	{name: "curl, HTTP/1.1", proto: "HTTP/1.1", version: "1.1", run: curlFlow("--http1.1")},
	// Debian 12's curl (7.88.1) fails every request after the first on an
	// h2c connection with prior knowledge ("Error in the HTTP2 framing
	// layer", with any server: curl/curl#10634, fixed in curl 8.0), so
	// each of its requests runs alone here; Go's client below runs h2c
	// with prior knowledge on one connection.
	{name: "curl, h2c with prior knowledge", proto: "HTTP/2.0", version: "2", run: curlEach("--http2-prior-knowledge"), oneEach: true},
	{name: "curl, h2c by upgrade", proto: "HTTP/1.1", version: "1.1", run: curlFlow("--http2")},
	{name: "Go net/http, h2c with prior knowledge", proto: "HTTP/2.0", version: "HTTP/2.0", run: goFlow(h2cTransport)},
	{name: "JDK HttpClient, defaults (h2c by upgrade)", proto: "HTTP/1.1", version: "HTTP_1_1", run: programFlow("java", "JdkClient.java")},
	{name: "Node fetch", proto: "HTTP/1.1", run: programFlow("node", "fetch_client.mjs")},
	{name: "python httpx", proto: "HTTP/1.1", version: "HTTP/1.1", run: programFlow(debianPython, "httpx_client.py")},
}

// TestTransportMatrix: every client completes its flow over the protocol
// it asked for, 20 or more requests on one connection, through the
// reference Caddyfile over TLS and over plain HTTP.
func TestTransportMatrix(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "consultation.bin")
	content := testkit.RandomBytes(1<<20 + 17)
	if err := os.WriteFile(file, content, 0o600); err != nil {
		t.Fatal(err)
	}
	sites := []struct {
		name    string
		start   func(*testing.T) *hdctest.Stack
		clients []transportClient
	}{
		{"https", hdctest.StartTLSStack, overTLS},
		{"http", func(t *testing.T) *hdctest.Stack { return hdctest.StartStack(t) }, overPlainHTTP},
	}
	for _, site := range sites {
		t.Run(site.name, func(t *testing.T) {
			s := site.start(t)
			for i, tc := range site.clients {
				t.Run(tc.name, func(t *testing.T) {
					c := s.NewClient(fmt.Sprintf("transport-%s-%d", site.name, i))
					mark := len(s.Output("hdc-edge"))
					f := tc.run(t, s, c, file)
					checkFlow(t, tc, f, content)
					perConnection := flowRetrieves
					if tc.oneEach {
						perConnection = 1
					}
					s.CheckAccessLines(t, mark, len(f.Statuses), tc.proto, perConnection)
				})
			}
		})
	}
}

// checkFlow checks what the client saw: every answer 200 over its
// protocol, and a Bundle describing the file.
func checkFlow(t *testing.T, tc transportClient, f flow, content []byte) {
	t.Helper()
	if len(f.Statuses) != flowRetrieves+2 {
		t.Fatalf("%d answers, want %d: %v", len(f.Statuses), flowRetrieves+2, f.Statuses)
	}
	for i, status := range f.Statuses {
		if status != http.StatusOK {
			t.Fatalf("answer %d: %d", i+1, status)
		}
	}
	for i, v := range f.Versions {
		if v != tc.version {
			t.Fatalf("answer %d came over %s, want %s", i+1, v, tc.version)
		}
	}
	if f.CareContextID == "" {
		t.Fatal("no care_context_id")
	}
	hdctest.CheckRecord(t, &hdctest.Response{Status: http.StatusOK, Body: f.Bundle}, content)
}

// programFlow runs a client program of tests/interop with the settings of
// the flow in HDC_FLOW_* variables; it prints the flow as JSON.
func programFlow(program, script string) func(*testing.T, *hdctest.Stack, *hdctest.APIClient, string) flow {
	return func(t *testing.T, s *hdctest.Stack, c *hdctest.APIClient, path string) flow {
		cmd := exec.Command(program, filepath.Join(hdctest.RepoRoot, "tests", "interop", script))
		cmd.Env = append(os.Environ(), "HDC_FLOW_BASE="+s.Edge, "HDC_FLOW_CLIENT_ID="+c.ID,
			"HDC_FLOW_CLIENT_SECRET="+c.Secret, "HDC_FLOW_KID="+c.Kid, "HDC_FLOW_KEY="+c.Key,
			"HDC_FLOW_FILE="+path, fmt.Sprintf("HDC_FLOW_RETRIEVES=%d", flowRetrieves))
		if s.Roots != nil {
			cmd.Env = append(cmd.Env, "HDC_FLOW_CA="+s.EdgeRoot(), "NODE_EXTRA_CA_CERTS="+s.EdgeRoot())
		}
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s", program, script, err, errOut.String())
		}
		var f flow
		if err := json.Unmarshal(out.Bytes(), &f); err != nil {
			t.Fatalf("%s %s printed %q: %v", program, script, out.String(), err)
		}
		return f
	}
}

// debianPython is Debian's python3, where the test command installs
// python3-httpx, python3-h2 and python3-jwcrypto.
const debianPython = "/usr/bin/python3"

// goFlow runs the flow with Go's HTTP client over the transport made by
// transport, the envelopes made and opened with go-jose.
func goFlow(transport func(*hdctest.Stack) http.RoundTripper) func(*testing.T, *hdctest.Stack, *hdctest.APIClient, string) flow {
	return func(t *testing.T, s *hdctest.Stack, c *hdctest.APIClient, path string) flow {
		rt := transport(s)
		if closer, ok := rt.(io.Closer); ok {
			defer closer.Close()
		}
		gc := &goClient{t: t, http: &http.Client{Transport: rt, Timeout: time.Minute}, base: s.Edge, c: c}
		var tk hdctest.Tokens
		gc.send(http.MethodPost, hdctest.LoginPath, "", map[string]string{"client_id": c.ID, "client_secret": c.Secret}, &tk)
		content, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var up struct {
			CareContextID string `json:"care_context_id"`
		}
		gc.send(http.MethodPost, hdctest.UploadPath, tk.AccessToken,
			map[string]string{"file": base64.StdEncoding.EncodeToString(content)}, &up)
		var bundle json.RawMessage
		for range flowRetrieves {
			gc.send(http.MethodGet, hdctest.RetrievePath+"?identifier="+url.QueryEscape(up.CareContextID), tk.AccessToken, nil, &bundle)
		}
		return flow{Statuses: gc.statuses, Versions: gc.versions, CareContextID: up.CareContextID, Bundle: bundle}
	}
}

func h2Transport(s *hdctest.Stack) http.RoundTripper {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.Roots}, Protocols: new(http.Protocols)}
	tr.Protocols.SetHTTP2(true)
	return tr
}

func h2cTransport(*hdctest.Stack) http.RoundTripper {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	return tr
}

func h3Transport(s *hdctest.Stack) http.RoundTripper {
	return &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: s.Roots}}
}

// goClient sends the encrypted requests of a Go flow.
type goClient struct {
	t        *testing.T
	http     *http.Client
	base     string
	c        *hdctest.APIClient
	statuses []int
	versions []string
}

// send sends body (if not nil) sealed as a compact envelope, and opens the
// answer into v.
func (g *goClient) send(method, path, token string, body, v any) {
	g.t.Helper()
	var reader io.Reader
	if body != nil {
		plain, _ := json.Marshal(body)
		reader = strings.NewReader(hdctest.GoJoseSeal(g.t, g.c, plain))
	}
	req, err := http.NewRequest(method, g.base+path, reader)
	if err != nil {
		g.t.Fatal(err)
	}
	req.Header.Set(hdctest.JWEHeader, "JWE")
	if token != "" {
		req.Header.Set(hdctest.Authorization, "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", hdctest.CompactType)
	} else {
		req.Header.Set(hdctest.JWEKidHeader, g.c.Kid)
		req.Header.Set("Accept", hdctest.CompactType)
	}
	resp, err := g.http.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s (answers so far %v): %v", method, path, g.statuses, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		g.t.Fatal(err)
	}
	g.statuses, g.versions = append(g.statuses, resp.StatusCode), append(g.versions, resp.Proto)
	if resp.StatusCode != http.StatusOK {
		g.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, answer)
	}
	if err := json.Unmarshal(goJoseOpen(g.t, g.c, answer), v); err != nil {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
}

// goJoseOpen opens a compact envelope under c's key with go-jose.
func goJoseOpen(t testing.TB, c *hdctest.APIClient, envelope []byte) []byte {
	t.Helper()
	obj, err := hdctest.ParseEnvelope(bytes.TrimSpace(envelope), true)
	if err != nil {
		t.Fatalf("the answer is not a compact envelope: %v: %.200s", err, envelope)
	}
	plain, err := obj.Decrypt([]byte(c.Key + c.Key))
	if err != nil {
		t.Fatalf("the answer does not open under the client's key: %v", err)
	}
	return plain
}

// curlFlow runs the flow with curl and its protocol option: the login and
// the upload each in a run of their own (each needs what the one before
// answered), then every retrieve in one run, over one connection. The
// envelopes are made and opened with go-jose.
func curlFlow(option string) func(*testing.T, *hdctest.Stack, *hdctest.APIClient, string) flow {
	return curlRuns(option, flowRetrieves)
}

// curlEach is curlFlow with each retrieve in a run of its own.
func curlEach(option string) func(*testing.T, *hdctest.Stack, *hdctest.APIClient, string) flow {
	return curlRuns(option, 1)
}

// curlRuns is curlFlow with perRun retrieves in each run.
func curlRuns(option string, perRun int) func(*testing.T, *hdctest.Stack, *hdctest.APIClient, string) flow {
	return func(t *testing.T, s *hdctest.Stack, c *hdctest.APIClient, path string) flow {
		cc := &curlClient{t: t, s: s, option: option, dir: t.TempDir()}
		var tk hdctest.Tokens
		login, _ := json.Marshal(map[string]string{"client_id": c.ID, "client_secret": c.Secret})
		cc.open(c, cc.run(cc.post(c, "login", hdctest.LoginPath, login), s.Edge+hdctest.LoginPath)[0], &tk)
		content, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		upload, _ := json.Marshal(map[string]string{"file": base64.StdEncoding.EncodeToString(content)})
		var up struct {
			CareContextID string `json:"care_context_id"`
		}
		args := append(cc.post(c, "upload", hdctest.UploadPath, upload), "-H", "Authorization: Bearer "+tk.AccessToken)
		cc.open(c, cc.run(args, s.Edge+hdctest.UploadPath)[0], &up)
		urls := make([]string, perRun)
		for i := range urls {
			urls[i] = s.Edge + hdctest.RetrievePath + "?identifier=" + url.QueryEscape(up.CareContextID)
		}
		var bundle json.RawMessage
		for range flowRetrieves / perRun {
			for _, answer := range cc.run([]string{"-H", "X-Encryption: JWE", "-H", "X-Encryption-Kid: " + c.Kid,
				"-H", "Accept: " + hdctest.CompactType, "-H", "Authorization: Bearer " + tk.AccessToken}, urls...) {
				cc.open(c, answer, &bundle)
			}
		}
		return flow{Statuses: cc.statuses, Versions: cc.versions, CareContextID: up.CareContextID, Bundle: bundle}
	}
}

// curlClient runs curl for a flow.
type curlClient struct {
	t        *testing.T
	s        *hdctest.Stack
	option   string
	dir      string
	statuses []int
	versions []string
}

// post returns the arguments of an encrypted POST of plaintext (sealed by
// go-jose into a file named name).
func (cc *curlClient) post(c *hdctest.APIClient, name, path string, plaintext []byte) []string {
	file := filepath.Join(cc.dir, name)
	if err := os.WriteFile(file, []byte(hdctest.GoJoseSeal(cc.t, c, plaintext)), 0o600); err != nil {
		cc.t.Fatal(err)
	}
	return []string{"-X", "POST", "-H", "X-Encryption: JWE", "-H", "Content-Type: " + hdctest.CompactType, "--data-binary", "@" + file}
}

// run runs curl once with args for urls, all on one connection, and
// returns the answers' bodies, noting their statuses and versions.
func (cc *curlClient) run(args []string, urls ...string) [][]byte {
	cc.t.Helper()
	all := append([]string{"-sS", cc.option, "--max-time", "60", "-w", "\n%{http_code} %{http_version}\n"}, args...)
	if cc.s.Roots != nil {
		all = append(all, "--cacert", cc.s.EdgeRoot())
	}
	out, err := hdctest.RunProgram(cc.t, nil, "curl", append(all, urls...)...)
	if err != nil {
		cc.t.Fatalf("%v (answers so far %v)", err, cc.statuses)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 2*len(urls) {
		cc.t.Fatalf("curl printed %d lines for %d answers: %.400s", len(lines), len(urls), out)
	}
	bodies := make([][]byte, len(urls))
	for i := range urls {
		var status int
		var version string
		if _, err := fmt.Sscanf(lines[2*i+1], "%d %s", &status, &version); err != nil {
			cc.t.Fatalf("curl's summary %q: %v", lines[2*i+1], err)
		}
		cc.statuses, cc.versions = append(cc.statuses, status), append(cc.versions, version)
		if status != http.StatusOK {
			cc.t.Fatalf("%s: %d %s", urls[i], status, lines[2*i])
		}
		bodies[i] = []byte(lines[2*i])
	}
	return bodies
}

// open opens an answer with go-jose into v.
func (cc *curlClient) open(c *hdctest.APIClient, answer []byte, v any) {
	cc.t.Helper()
	if err := json.Unmarshal(goJoseOpen(cc.t, c, answer), v); err != nil {
		cc.t.Fatal(err)
	}
}
