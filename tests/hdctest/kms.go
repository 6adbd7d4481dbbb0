package hdctest

import (
	"bufio"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// KMS is local-kms, an implementation of AWS KMS's API, on loopback
// (tests/localkms): the real awskms:// driver of the keepers talks to it
// as to AWS.
type KMS struct {
	endpoint string    // http://127.0.0.1:port
	keys     [2]string // key ids; the second for a rewrap
}

// StartKMS starts local-kms with a fresh database, stopped when the test
// ends.
func StartKMS(t *testing.T) KMS {
	t.Helper()
	bin := Binary(t, "localkms")
	cmd := exec.Command(bin, filepath.Join(t.TempDir(), "kms"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	lines := bufio.NewScanner(out)
	var got []string
	for len(got) < 3 && lines.Scan() {
		got = append(got, lines.Text())
	}
	if len(got) < 3 {
		t.Fatalf("local-kms did not start: %v", lines.Err())
	}
	k := KMS{endpoint: "http://" + got[0], keys: [2]string{got[1], got[2]}}
	awsEnvOnce.Do(func() {
		for _, kv := range k.Env() { // the test process's own keepers, as the programs'
			name, value, _ := strings.Cut(kv, "=")
			os.Setenv(name, value)
		}
	})
	return k
}

// awsEnvOnce sets the AWS environment of Env in the test process once:
// it is the same for every KMS, and tests running side by side may not
// set it each (t.Setenv).
var awsEnvOnce sync.Once

// URL returns the keeper URL of key i.
func (k KMS) URL(i int) string {
	return "awskms://" + k.keys[i] + "?region=us-east-1&endpoint=" + url.QueryEscape(k.endpoint)
}

// Env is the AWS environment of a process that uses the KMS: credentials
// local-kms does not check, and no instance metadata to look for.
func (k KMS) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=hdc", "AWS_SECRET_ACCESS_KEY=hdc-test-secret", "AWS_EC2_METADATA_DISABLED=true"}
}

// Disable disables key i, as an operator retires a KMS key: what it
// wrapped no longer unwraps, and it wraps nothing.
func (k KMS) Disable(t *testing.T, i int) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, k.endpoint, strings.NewReader(`{"KeyId":"`+k.keys[i]+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "TrentService.DisableKey")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("DisableKey: %s", resp.Status)
	}
}
