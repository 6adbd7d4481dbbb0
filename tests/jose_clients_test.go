package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The serializations a client may use for a request.
const (
	formJSON    = "json"
	formCompact = "compact"
)

// A joseClient is a JOSE implementation this project did not write,
// driven as a program of tests/interop or tests/jwxclient:
//
//	PROGRAM encrypt KEY KID FORM   plaintext on stdin → envelope on stdout
//	PROGRAM decrypt KEY FORM       envelope on stdin → plaintext on stdout
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

// encrypt makes an envelope of plaintext under c's key, in form.
func (j joseClient) encrypt(t testing.TB, c *apiClient, form string, plaintext []byte) []byte {
	t.Helper()
	return j.run(t, plaintext, "encrypt", c.Key, c.Kid, form)
}

// decrypt opens an answer, in form, with c's key.
func (j joseClient) decrypt(t testing.TB, c *apiClient, form string, envelope []byte) []byte {
	t.Helper()
	return j.run(t, envelope, "decrypt", c.Key, form)
}

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
