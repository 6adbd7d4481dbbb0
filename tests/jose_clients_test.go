package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/jwe"
)

// The serializations a client may use for a request.
const (
	formJSON    = "json"
	formCompact = "compact"
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
	// argv returns the program and its first arguments.
	argv func(t testing.TB) []string
	// jsonType is the media type it sends a JSON request as.
	jsonType string
}

var (
	npmJose = joseClient{name: "npm jose", argv: nodeArgv("jwe.mjs"), jsonType: jsonType}
	// joseClients are the clients of the matrix: every one must complete
	// every flow in both forms.
	joseClients = []joseClient{
		npmJose,
		{name: "npm node-jose", argv: nodeArgv("nodejose.mjs"), jsonType: "application/jose+json"},
		{name: "python jwcrypto", argv: pythonArgv("jwcrypto", "jwcrypto_client.py"), jsonType: jsonType},
		{name: "python authlib", argv: pythonArgv("authlib", "authlib_client.py"), jsonType: jsonType},
		jwx,
		{name: "Go go-jose v4", argv: goJoseArgv, jsonType: jsonType},
	}
	jwx = joseClient{name: "Go jwx v3", argv: jwxArgv, jsonType: "application/jose+json"}
)

func nodeArgv(script string) func(testing.TB) []string {
	return func(testing.TB) []string {
		return []string{"node", filepath.Join(repoRoot, "tests", "interop", script)}
	}
}

// pythonArgv runs script with Debian's python3, where the test command
// installs python3-jwcrypto and python3-authlib (another python3 earlier
// on PATH may not have them).
func pythonArgv(module, script string) func(testing.TB) []string {
	return func(t testing.TB) []string {
		python := "/usr/bin/python3"
		if _, err := os.Stat(python); err != nil {
			python = "python3"
		}
		if out, err := exec.Command(python, "-c", "import "+module).CombinedOutput(); err != nil {
			t.Fatalf("%s cannot import %s (scripts/test.sh installs python3-%s): %v\n%s", python, module, module, err, out)
		}
		return []string{python, filepath.Join(repoRoot, "tests", "interop", script)}
	}
}

// goJoseArgv builds tests/gojoseclient once.
func goJoseArgv(t testing.TB) []string {
	return []string{build(t, "gojoseclient", repoRoot, "./tests/gojoseclient")}
}

// jwxArgv builds tests/jwxclient, a module of its own, once.
func jwxArgv(t testing.TB) []string {
	return []string{build(t, "jwxclient", filepath.Join(repoRoot, "tests", "jwxclient"), ".")}
}

func (j joseClient) run(t testing.TB, stdin []byte, args ...string) []byte {
	t.Helper()
	argv := j.argv(t)
	out, err := runProgram(t, stdin, argv[0], append(argv[1:], args...)...)
	if err != nil {
		t.Fatalf("%s: %v", j.name, err)
	}
	return out
}

// encrypt makes an envelope of plaintext under c's key, in form: under an
// A256GCM key, with iat (now) and a new jti in its protected header.
func (j joseClient) encrypt(t testing.TB, c *apiClient, form string, plaintext []byte) []byte {
	t.Helper()
	args := []string{"encrypt", c.Key, c.Kid, form}
	if c.Enc == encGCM {
		args = append(args, c.Enc, strconv.FormatInt(time.Now().Unix(), 10), newJTI())
	}
	return j.run(t, plaintext, args...)
}

// decrypt opens an answer, in form, with c's key.
func (j joseClient) decrypt(t testing.TB, c *apiClient, form string, envelope []byte) []byte {
	t.Helper()
	args := []string{"decrypt", c.Key, form}
	if c.Enc == encGCM {
		args = append(args, c.Enc)
	}
	return j.run(t, envelope, args...)
}

// encGCM is the enc of the second kind of key.
const encGCM = "A256GCM"

// newJTI returns a new request id of 128 random bits.
func newJTI() string { return jwe.Fresh("").Jti }

// sealedBy is how a request is encrypted: by which client, in which form.
type sealedBy struct {
	client joseClient
	form   string
}

func (v sealedBy) String() string { return fmt.Sprintf("%s, %s", v.client.name, v.form) }

// requestType is the media type of the request's envelope.
func (v sealedBy) requestType() string {
	if v.form == formCompact {
		return compactType
	}
	return v.client.jsonType
}

// answerType is the media type the answer must have: the request's form.
func (v sealedBy) answerType() string {
	if v.form == formCompact {
		return compactType
	}
	return jsonType
}
