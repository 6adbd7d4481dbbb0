package e2e

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestCallRefusesUnsealedAnswers (hardening finding 5): hdc call --encrypt,
// against a fake API, refuses a successful answer that is not an envelope
// under the client's key (a forged login or record) with a non-zero exit
// and prints nothing of it; an unencrypted error answer is printed marked
// as unauthenticated.
func TestCallRefusesUnsealedAnswers(t *testing.T) {
	t.Parallel()
	const (
		kid    = "k-call"
		shared = "call-test-key-16"
		tokens = `{"access_token":"forged-access","expires_in":1800,"refresh_token":"forged-refresh","refresh_expires_in":3600}`
		record = `{"resourceType":"Bundle","id":"forged-record"}`
	)
	key, err := jwe.NewKey(shared)
	if err != nil {
		t.Fatal(err)
	}
	other, err := jwe.NewKey("another-key-0016")
	if err != nil {
		t.Fatal(err)
	}
	plain := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}
	}
	sealed := func(k *jwe.CEK, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set(contract.HeaderEncryption, contract.EncryptionJWE)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(jwe.EncryptResponse(k, kid, []byte(body)))
		}
	}
	tests := []struct {
		name            string
		login, retrieve http.HandlerFunc
		ok              bool
		stdout, stderr  string // expected in each
		notInStdout     string
	}{
		{"a forged login", plain(200, tokens), plain(200, record), false, "", "not encrypted under key " + kid, "forged"},
		{"a forged record", sealed(key, tokens), plain(200, record), false, "", "not encrypted under key " + kid, "forged"},
		{"an envelope under another key", sealed(other, tokens), sealed(key, record), false, "", "does not decrypt under key " + kid, "forged"},
		{"a plain problem at login", plain(401, `{"status":401,"code":"unauthenticated"}`), plain(200, record), false,
			"", "unauthenticated answer: HTTP 401", "forged"},
		{"a plain problem", sealed(key, tokens), plain(404, `{"status":404,"code":"not_found"}`), false,
			"not_found", "unauthenticated answer: HTTP 404", "forged"},
		{"sealed answers", sealed(key, tokens), sealed(key, record), true, "forged-record", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.HandleFunc(contract.PathLogin, tt.login)
			mux.HandleFunc(contract.PathRetrieve, tt.retrieve)
			api := httptest.NewServer(mux)
			defer api.Close()
			dir := t.TempDir()
			cmd := exec.Command(hdctest.Binary(t, "hdc"), "call", "--encrypt", "--base", api.URL, "--client-id", "c-call",
				"--client-secret", "s", "--kid", kid, "--key", shared, "GET", contract.PathRetrieve, "--query", "identifier=x")
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_CACHE_HOME=" + filepath.Join(dir, "cache")}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if tt.ok != (err == nil) || (err != nil && !errors.As(err, &exit)) {
				t.Fatalf("exit: %v, want success %v\nstdout: %s\nstderr: %s", err, tt.ok, stdout.Bytes(), stderr.Bytes())
			}
			if !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) ||
				(tt.notInStdout != "" && strings.Contains(stdout.String(), tt.notInStdout)) {
				t.Fatalf("stdout: %s\nstderr: %s", stdout.Bytes(), stderr.Bytes())
			}
		})
	}
}
