package hdctest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/testkit"
	"go.step.sm/crypto/jose"
)

// The serializations a client may use for a request.
const (
	FormJSON    = "json"
	FormCompact = "compact"
)

// A joseClient is a JOSE implementation this project did not write,
// driven as a program of tests/interop or tests/jwxclient:
//
//	PROGRAM encrypt KEY KID FORM [ENC IAT JTI]   plaintext on stdin → envelope on stdout
//	PROGRAM decrypt KEY FORM [ENC]               envelope on stdin → plaintext on stdout
//
// ENC is the key's content encryption (A128CBC-HS256 when not given, KEY
// being the 16-byte shared string; A256GCM, KEY being the JWK's k); IAT and
// JTI go in the protected header.
//
// Each program's comment says how it uses its library, and which one
// setting, if any, the library needs.
type joseClient struct {
	name string
	// script is the client's script of tests/interop, run by Node; or
	// argv returns the program and its first arguments.
	script string
	argv   func(t testing.TB) []string
	// jsonType is the media type it sends a JSON request as.
	jsonType string
	// compactOnly: its JSON serialization is not one the gateway takes,
	// and it has no setting to fix it.
	compactOnly bool
}

// Forms returns the serializations the client writes requests in.
func (j joseClient) Forms() []string {
	if j.compactOnly {
		return []string{FormCompact}
	}
	return []string{FormJSON, FormCompact}
}

var (
	npmJose = joseClient{name: "npm jose", script: "jwe.mjs", jsonType: JSONType}
	// joseClients are the clients of the matrix: every one must complete
	// every flow in both forms.
	JoseClients = []joseClient{
		npmJose,
		{name: "npm node-jose", script: "nodejose.mjs", jsonType: "application/jose+json"},
		{name: "python jwcrypto", argv: pythonArgv("jwcrypto", "jwcrypto_client.py"), jsonType: JSONType},
		{name: "python authlib", argv: pythonArgv("authlib", "authlib_client.py"), jsonType: JSONType},
		JWX,
		{name: "Go jwx v2", argv: toolArgv("jwxclient-v2"), compactOnly: true},
		{name: "latchset jose CLI", argv: joseCLIArgv, jsonType: JSONType},
		{name: "Go go-jose v4", argv: toolArgv("gojoseclient"), jsonType: JSONType},
	}
	JWX = joseClient{name: "Go jwx v3", argv: toolArgv("jwxclient"), jsonType: "application/jose+json"}
)

// pythonArgv runs script with Debian's python3, where the test command
// installs python3-jwcrypto and python3-authlib (another python3 earlier
// on PATH may not have them).
// The check that python imports the module runs once per test process.
func pythonArgv(module, script string) func(testing.TB) []string {
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		python = "python3"
	}
	importable := sync.OnceValue(func() error {
		if out, err := exec.Command(python, "-c", "import "+module).CombinedOutput(); err != nil {
			return fmt.Errorf("%s cannot import %s (scripts/test.sh installs python3-%s): %v\n%s", python, module, module, err, out)
		}
		return nil
	})
	return func(t testing.TB) []string {
		if err := importable(); err != nil {
			t.Fatal(err)
		}
		return []string{python, filepath.Join(RepoRoot, "tests", "interop", script)}
	}
}

// joseCLIArgv runs tests/interop/josecli.sh over Debian's jose, which the
// test command installs.
func joseCLIArgv(t testing.TB) []string {
	if _, err := exec.LookPath("jose"); err != nil {
		t.Fatal("no jose CLI (Debian's package jose; scripts/test.sh installs it)")
	}
	return []string{"sh", filepath.Join(RepoRoot, "tests", "interop", "josecli.sh")}
}

// toolArgv runs one of the tests' programs, built once per run: go-jose
// (tests/gojoseclient), jwx v3 and v2 (tests/jwxclient, a module of its own).
func toolArgv(name string) func(testing.TB) []string {
	return func(t testing.TB) []string { return []string{Binary(t, name)} }
}

func (j joseClient) run(t testing.TB, stdin []byte, args ...string) []byte {
	t.Helper()
	var out []byte
	var err error
	if j.script != "" {
		out, err = Node(t, stdin, j.script, args...)
	} else {
		argv := j.argv(t)
		out, err = RunProgram(t, stdin, argv[0], append(argv[1:], args...)...)
	}
	if err != nil {
		t.Fatalf("%s: %v", j.name, err)
	}
	return out
}

// Encrypt makes an envelope of plaintext under c's key, in form: under an
// A256GCM key, with iat (now) and a new jti in its protected header.
func (j joseClient) Encrypt(t testing.TB, c *APIClient, form string, plaintext []byte) []byte {
	t.Helper()
	args := []string{"encrypt", c.keyArg(), c.Kid, form}
	if c.Enc == EncGCM {
		args = append(args, c.Enc, strconv.FormatInt(time.Now().Unix(), 10), NewJTI())
	}
	return j.run(t, plaintext, args...)
}

// decrypt opens an answer, in form, with c's key.
func (j joseClient) decrypt(t testing.TB, c *APIClient, form string, envelope []byte) []byte {
	t.Helper()
	args := []string{"decrypt", c.keyArg(), form}
	if c.Enc == EncGCM {
		args = append(args, c.Enc)
	}
	return j.run(t, envelope, args...)
}

// keyArg is how a JOSE client is handed c's key: the JWK hdc keys add
// printed, as it is, when it is the JWK of c's kid and key (a test that
// copies a client and gives it another key leaves the copy's JWK
// behind); else the shared string or k.
func (c *APIClient) keyArg() string {
	var jwk struct{ Kid, K string }
	if json.Unmarshal([]byte(c.JWK), &jwk) != nil || jwk.Kid != c.Kid {
		return c.Key
	}
	k := c.Key // A256GCM: k itself
	if c.Enc != EncGCM {
		k = base64.RawURLEncoding.EncodeToString([]byte(c.Key + c.Key))
	}
	if jwk.K != k {
		return c.Key
	}
	return c.JWK
}

// EncGCM is the enc of the second kind of key.
const EncGCM = "A256GCM"

// NewJTI returns a new request id of 128 random bits.
func NewJTI() string { return jwe.Fresh("").Jti }

// SealedBy is how a request is encrypted: by which client, in which form.
type SealedBy struct {
	Client joseClient
	Form   string
}

func (v SealedBy) String() string { return fmt.Sprintf("%s, %s", v.Client.name, v.Form) }

// requestType is the media type of the request's envelope.
func (v SealedBy) requestType() string {
	if v.Form == FormCompact {
		return CompactType
	}
	return v.Client.jsonType
}

// answerType is the media type the answer must have: the request's form.
func (v SealedBy) answerType() string {
	if v.Form == FormCompact {
		return CompactType
	}
	return JSONType
}

const RefreshCompatPath = "/connect-auth/v1/account/refresh"

// ClientFlow runs the flows of the matrix as a new client with a key of
// enc, every request sealed by v.
func (s *Stack) ClientFlow(v SealedBy, enc string) {
	t := s.T
	c := s.NewClientEnc("matrix-"+strings.NewReplacer(" ", "-", ",", "").Replace(v.String())+enc, enc)
	login, _ := json.Marshal(map[string]string{"client_id": c.ID, "client_secret": c.Secret})
	tk := s.Tokens("login", s.sendSealed(v, c, "POST", LoginPath, login, nil))

	endpoint := "https://hooks.example.org/" + url.PathEscape(c.ID)
	secret := "whsec_" + base64.StdEncoding.EncodeToString(testkit.RandomBytes(32))
	sub := s.sendSealed(v, c, "POST", SubsPath, []byte(`{"endpoint":"`+endpoint+`","event_names":["user.delete"],"signing_key":"`+secret+`"}`), Bearer(tk))
	if sub.Status != 200 || sub.JSON(t)["status"] != "success" {
		t.Fatalf("register: %s", sub)
	}
	if list := s.sendSealed(v, c, "GET", SubsPath, nil, Bearer(tk)); list.Status != 200 || !bytes.Contains(list.Body, []byte(endpoint)) {
		t.Fatalf("list: %s", list)
	}

	file := testkit.RandomBytes(3000)
	up := s.sendSealed(v, c, "POST", UploadPath, JSONUpload(file), Bearer(tk))
	id, _ := up.JSON(t)["care_context_id"].(string)
	if up.Status != 200 || id == "" {
		t.Fatalf("upload: %s", up)
	}
	CheckRecord(t, s.sendSealed(v, c, "GET", RetrievePath+"?identifier="+url.QueryEscape(id), nil, Bearer(tk)), file)

	// Refresh on the main route, then as a client of the first version
	// does: an empty bearer, a lower-case client-id, the expired pair.
	body, _ := json.Marshal(map[string]string{"refresh_token": tk.RefreshToken, "access_token": tk.AccessToken})
	next := s.Tokens("refresh", s.sendSealed(v, c, "POST", RefreshPath, body, map[string]string{Authorization: "Bearer " + tk.AccessToken, "Client-Id": c.ID}))
	body, _ = json.Marshal(map[string]string{"refresh_token": next.RefreshToken, "access_token": next.AccessToken})
	third := s.Tokens("compatibility refresh", s.sendSealed(v, c, "POST", RefreshCompatPath, body, map[string]string{Authorization: "Bearer ", "client-id": c.ID}))
	if third.RefreshToken == next.RefreshToken || next.RefreshToken == tk.RefreshToken {
		t.Fatal("a refresh did not rotate the refresh token")
	}
	// The new access token works.
	if r := s.sendSealed(v, c, "GET", SubsPath, nil, Bearer(third)); r.Status != 200 {
		t.Fatalf("list with the refreshed token: %s", r)
	}
}

// Tokens reads a token pair from a successful answer.
func (s *Stack) Tokens(what string, r *Response) Tokens {
	s.T.Helper()
	var tk Tokens
	if r.Status != 200 || json.Unmarshal(r.Body, &tk) != nil || tk.AccessToken == "" || tk.RefreshToken == "" {
		s.T.Fatalf("%s: %s", what, r)
	}
	return tk
}

// FreshRequests checks the freshness of encrypted requests through the
// edges of one deployment, an A256GCM key's client sealing every request
// with go-jose: an encrypted login and a webhook registration replayed
// byte for byte, through the other edge and through the same one, are
// refused as replays and change nothing; a request whose iat is ten
// minutes old is refused as stale; a new request is served; and a
// --require-fresh key refuses an envelope without iat and jti.
func FreshRequests(t *testing.T, ops *Stack, a, b *Stack) {
	g := ops.NewClientEnc("fresh-requests", EncGCM)
	goJose := JoseClients[len(JoseClients)-1]
	seal := func(body []byte, iat int64) []byte {
		return goJose.run(t, body, "encrypt", g.Key, g.Kid, FormJSON, EncGCM, strconv.FormatInt(iat, 10), NewJTI())
	}
	// post sends an envelope and returns the answer, opened when sealed:
	// once the tag verified, every answer is, the refusals of an edge (a
	// replay it saw itself, before the backend) as those of the backend.
	post := func(e *Stack, path string, env []byte, h map[string]string) *Response {
		h = WithBodyType(h, env)
		h[JWEHeader] = "JWE"
		r := e.Do("POST", path, env, h)
		if r.Header.Get(JWEHeader) == "JWE" {
			r.Body, r.sealed = goJose.decrypt(t, g, FormJSON, r.Body), true
		}
		return r
	}
	login := seal(LoginBody(g), time.Now().Unix())
	r := post(a, LoginPath, login, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("a fresh encrypted login: %s", r)
	}
	var tk Tokens
	if err := json.Unmarshal(r.Body, &tk); err != nil || tk.AccessToken == "" {
		t.Fatalf("the login's answer: %v", err)
	}
	expectSealedProblem(t, post(b, LoginPath, login, nil), 400, "replayed_request")
	expectSealedProblem(t, post(a, LoginPath, login, nil), 400, "replayed_request")

	endpoint := "https://hooks.example.org/fresh-requests"
	register := seal([]byte(`{"endpoint":"`+endpoint+`","event_names":["user.delete"]}`), time.Now().Unix())
	if r := post(b, SubsPath, register, Bearer(tk)); r.Status != http.StatusOK {
		t.Fatalf("a fresh registration: %s", r)
	}
	expectSealedProblem(t, post(a, SubsPath, register, Bearer(tk)), 400, "replayed_request")
	stale := seal([]byte(`{"endpoint":"`+endpoint+`-2","event_names":["user.delete"]}`), time.Now().Add(-10*time.Minute).Unix())
	expectSealedProblem(t, post(a, SubsPath, stale, Bearer(tk)), 400, "stale_request")

	list := a.sendSealed(SealedBy{goJose, FormJSON}, g, "GET", SubsPath, nil, Bearer(tk))
	var subs struct {
		Subscriptions []struct{ Endpoint string } `json:"subscriptions"`
	}
	if err := json.Unmarshal(list.Body, &subs); err != nil || list.Status != http.StatusOK {
		t.Fatalf("list: %s", list)
	}
	if len(subs.Subscriptions) != 1 || subs.Subscriptions[0].Endpoint != endpoint {
		t.Fatalf("after a registration and its replay and a stale one, the workspace has %+v", subs.Subscriptions)
	}

	// An A128CBC-HS256 key made with --require-fresh refuses an envelope
	// without iat and jti, as the specification's clients send it.
	ExpectFreshnessRequired(t, b, ops.NewClientEnc("fresh-requests-strict", "", "--require-fresh"))
}

// ExpectFreshnessRequired checks that the edge e refuses c's login sealed
// by go-jose under c's key without iat and jti, 400 freshness_required,
// sealed: c's key is one whose envelopes must be fresh.
func ExpectFreshnessRequired(t *testing.T, e *Stack, c *APIClient) {
	t.Helper()
	goJose := JoseClients[len(JoseClients)-1]
	r := e.Do("POST", LoginPath, goJose.Encrypt(t, c, FormJSON, LoginBody(c)), map[string]string{"Content-Type": JSONType, JWEHeader: "JWE"})
	if r.Header.Get(JWEHeader) == "JWE" {
		r.Body, r.sealed = goJose.decrypt(t, c, FormJSON, r.Body), true
	}
	expectSealedProblem(t, r, 400, "freshness_required")
}

// expectSealedProblem checks a problem answer that came sealed under the
// request's key: its tag verified, so the key's holder reads the code.
func expectSealedProblem(t *testing.T, r *Response, status int, code string) {
	t.Helper()
	if !r.sealed {
		t.Fatalf("the %d %s answer came in the clear, not sealed under the request's key: %s", status, code, r)
	}
	ExpectProblem(t, r, status, code)
}

// GoJoseSeal makes a compact envelope of plaintext under c's key with
// go-jose.
func GoJoseSeal(t testing.TB, c *APIClient, plaintext []byte) string {
	t.Helper()
	enc, err := jose.NewEncrypter(jose.A128CBC_HS256,
		jose.Recipient{Algorithm: jose.DIRECT, Key: []byte(c.Key + c.Key), KeyID: c.Kid}, nil)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := enc.Encrypt(plaintext)
	if err != nil {
		t.Fatal(err)
	}
	compact, err := obj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return compact
}
