package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// redisSecret is a password an operator put in the Redis URL, which no
// message may repeat.
const redisSecret = "hunter2-in-the-redis-url"

// TestMisconfigurationFailsFast runs the real binaries with the mistakes a
// new operator makes and checks each exits at once with one line on
// standard error that names what to fix.
func TestMisconfigurationFailsFast(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hop := filepath.Join(dir, "tls")
	if err := pki.InitDir(hop, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	registry := filepath.Join(dir, "keys.json")
	keeperURL := hdctest.DataKeeper(t, dir) // hdc finds it in the data directory
	if _, err := hdctest.RunProgram(t, nil, hdctest.Binary(t, "hdc"), "keys", "add", "--client", "c1", "--registry", registry, "--data", dir); err != nil {
		t.Fatal(err)
	}
	if _, err := hdctest.RunProgram(t, nil, hdctest.Binary(t, "hdc"), "clients", "create", "--workspace", "w1", "--data", dir); err != nil {
		t.Fatal(err) // the database, its secrets sealed under keeperURL
	}
	other := testkit.KeeperURL()
	edgeEnv := func(extra ...string) []string {
		return append([]string{"HOME=" + dir, "HDC_SITE=http://" + testkit.FreeAddr(t), "HDC_EDGE_ADMIN=off", "HDC_KEEPER=" + keeperURL,
			"HDC_KEY_REGISTRY=" + registry, "HDC_HOP_CA=" + filepath.Join(hop, pki.CAFile),
			"HDC_HOP_CERT=" + filepath.Join(hop, pki.CertFile(pki.Edge)), "HDC_HOP_KEY=" + filepath.Join(hop, pki.KeyFile(pki.Edge))}, extra...)
	}
	edge := []string{hdctest.Binary(t, "hdc-edge"), "run", "--config", filepath.Join(hdctest.RepoRoot, "Caddyfile")}
	backendEnv := func(extra ...string) []string {
		return append([]string{"HDC_DATA=" + dir, "HDC_LISTEN=" + testkit.FreeAddr(t), "HDC_INTERNAL_LISTEN=" + testkit.FreeAddr(t)}, extra...)
	}
	tests := []struct {
		name string
		argv []string
		env  []string
		want string
	}{
		{"edge without its registry", edge, edgeEnv("HDC_KEY_REGISTRY=" + filepath.Join(dir, "none.json")), "hdc-edge: the key registry " + filepath.Join(dir, "none.json") + " does not exist"},
		{"edge with the backend's certificate", edge, edgeEnv("HDC_HOP_CERT="+filepath.Join(hop, pki.CertFile(pki.Backend)), "HDC_HOP_KEY="+filepath.Join(hop, pki.KeyFile(pki.Backend))), "is not an edge's"},
		{"edge without the hop's files", edge, edgeEnv("HDC_HOP_CERT=" + filepath.Join(dir, "edge.pem")), "HDC_HOP_CERT"},
		{"backend with a bad size", []string{hdctest.Binary(t, "hdc-backend")}, []string{"HDC_DATA=" + dir, "HDC_UPLOAD_LIMIT=big"}, "hdc-backend: HDC_UPLOAD_LIMIT:"},
		{"backend with a missing hop file", []string{hdctest.Binary(t, "hdc-backend")}, backendEnv("HDC_KEEPER="+keeperURL,
			"HDC_HOP_CA="+filepath.Join(hop, pki.CAFile), "HDC_HOP_CERT="+filepath.Join(dir, "nope.pem"),
			"HDC_HOP_KEY="+filepath.Join(hop, pki.KeyFile(pki.Backend))), "--hop-cert (HDC_HOP_CERT)"},
		{"edge without the registry's keeper", edge, edgeEnv("HDC_KEEPER="), "configure the keeper (HDC_KEEPER)"},
		{"edge with another keeper", edge, edgeEnv("HDC_KEEPER=" + other), "cannot unwrap the data key"},
		{"edge with a missing key file", edge, edgeEnv("HDC_KEEPER=keyfile://" + filepath.Join(dir, "none.key")), "the keeper (HDC_KEEPER in the reference Caddyfile): keyfile: the key file"},
		{"backend without a keeper", []string{hdctest.Binary(t, "hdc-backend")}, backendEnv(), "--keeper (HDC_KEEPER) is required"},
		{"backend with a missing key file", []string{hdctest.Binary(t, "hdc-backend")}, backendEnv("HDC_KEEPER=keyfile://" + filepath.Join(dir, "none.key")), "--keeper (HDC_KEEPER): keyfile: the key file"},
		{"backend with another keeper", []string{hdctest.Binary(t, "hdc-backend")}, backendEnv("HDC_KEEPER=" + other), "--keeper (HDC_KEEPER): the keeper: the store's data key"},
		// Whoever reaches the rate limits' Redis controls every allowance.
		// (Nothing dials it: the edge refuses the configuration first.)
		{"edge with a Redis off this host without a password", edge, edgeEnv("HDC_RATELIMIT_REDIS=redis://10.0.0.31:6379/0"),
			"hdc-edge: rate_limits: redis: the Redis at 10.0.0.31:6379 has no password"},
		{"edge with a password in the Redis URL", edge, edgeEnv("HDC_RATELIMIT_REDIS=rediss://hdc-edge:" + redisSecret + "@127.0.0.1:6380/0"),
			"hdc-edge: rate_limits: redis: the URL holds a password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(tt.argv[0], tt.argv[1:]...)
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, tt.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("it exited with status 0")
				}
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("it is still running after 20 s; it wrote:\n%s", stderr.String())
			}
			got := strings.TrimSuffix(stderr.String(), "\n")
			if strings.Contains(got, "\n") || !strings.Contains(got, tt.want) {
				t.Fatalf("stderr is not one line naming %q:\n%s", tt.want, got)
			}
			if strings.Contains(got, redisSecret) {
				t.Fatalf("stderr shows the Redis password: %s", got)
			}
		})
	}
}
