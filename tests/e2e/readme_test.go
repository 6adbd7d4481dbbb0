package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestProductionSectionAsWritten runs the production deployment commands of
// docs/deploy.md in their printed order on an empty machine, as an operator
// would paste them, and then logs in through the edge they started. What
// it changes is only where things go and what is reachable from a test:
// the directories (/usr/local/bin, /etc/hdc, /var/lib/hdc) move under a
// temporary directory, the site is plain HTTP on a loopback port instead of
// a domain name (no certificate authority is reachable), every listener
// gets a free loopback port, and <W client id> is the id that `hdc clients
// create --workspace W` printed. A long-running command (ending in &, or the edge's run)
// runs in the background until the test ends.
func TestProductionSectionAsWritten(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	bin := filepath.Join(root, "usr/local/bin") + "/"
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	site := testkit.FreeAddr(t)
	backendAddr, internal := testkit.FreeAddr(t), testkit.FreeAddr(t)
	_, metricsPort, _ := net.SplitHostPort(testkit.FreeAddr(t))
	paths := strings.NewReplacer("/usr/local/bin/", bin, "/etc/hdc", filepath.Join(root, "etc/hdc"),
		"/var/lib/hdc", filepath.Join(root, "var/lib/hdc"),
		"HDC_SITE=api.example.org", "HDC_SITE=http://"+site, "HDC_BIND=0.0.0.0", "HDC_BIND=127.0.0.1",
		"HDC_ADMIN_URL=https://127.0.0.1:9081", "HDC_ADMIN_URL=https://"+internal)
	env := append(os.Environ(), hdctest.GoEnv(t)...)
	env = append(env, "PATH="+bin+":"+os.Getenv("PATH"), "HOME="+root,
		"HDC_LISTEN="+backendAddr, "HDC_INTERNAL_LISTEN="+internal, "HDC_BACKEND="+backendAddr,
		"HDC_BACKEND_INTERNAL=https://"+internal, "HDC_METRICS_PORT="+metricsPort)

	ids := map[string]string{}  // "<W client id>" to the id
	var clientID, secret string // the first client's
	for _, line := range hdctest.DocBlock(t, "docs/deploy.md", "## Production deployment") {
		line = placeholder.ReplaceAllStringFunc(paths.Replace(line), func(p string) string { return ids[p] })
		if name, value, ok := strings.Cut(strings.TrimPrefix(line, "export "), "="); ok && strings.HasPrefix(line, "export ") {
			env = append(env, name+"="+value)
			continue
		}
		if bg, ok := strings.CutSuffix(line, "&"); ok || strings.Contains(line, "hdc-edge run") {
			if ok {
				line = bg
			}
			hdctest.StartBackground(t, hdctest.RepoRoot, line, env)
			continue
		}
		out := hdctest.RunLine(t, line, env)
		if strings.Contains(line, "clients create") {
			var c struct {
				ClientID     string `json:"client_id"`
				ClientSecret string `json:"client_secret"`
			}
			ws := workspaceFlag.FindStringSubmatch(line)
			if err := json.Unmarshal([]byte(out), &c); err != nil || c.ClientID == "" || ws == nil {
				t.Fatalf("%s printed %q: %v", line, out, err)
			}
			ids["<"+ws[1]+" client id>"] = c.ClientID
			if clientID == "" {
				clientID, secret = c.ClientID, c.ClientSecret
			}
		}
	}
	if clientID == "" {
		t.Fatal("the section created no client")
	}

	login := fmt.Sprintf(`{"client_id":%q,"client_secret":%q}`, clientID, secret)
	testkit.Eventually(t, 30*time.Second, "a login through the edge", func() bool {
		res, err := http.Post("http://"+site+"/connect-auth/v1/account/login", "application/json", strings.NewReader(login))
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
}

var (
	placeholder   = regexp.MustCompile(`<\S+ client id>`)
	workspaceFlag = regexp.MustCompile(`--workspace (\S+)`)
)

// TestWalkthroughAsWritten runs the README's walkthrough as a newcomer
// would paste it: hdc up in one terminal (on free ports, the only change),
// every line of the first block in another, from a directory holding the
// data hdc up made, then the webhook block with its receiver in a third.
func TestWalkthroughAsWritten(t *testing.T) {
	t.Parallel()
	hdc := hdctest.Binary(t, "hdc")
	dir := t.TempDir()
	listen, metrics, backendAddr, internal, hooks := testkit.FreeAddr(t), testkit.FreeAddr(t), testkit.FreeAddr(t), testkit.FreeAddr(t), testkit.FreeAddr(t)
	env := []string{"PATH=" + filepath.Dir(hdc) + ":" + os.Getenv("PATH"), "HOME=" + dir, "HDC_BACKEND_INTERNAL=https://" + internal}
	startUp(t, hdc, dir, env, []string{"up", "--allow-loopback-webhooks", "--listen", listen, "--metrics", metrics,
		"--backend-listen", backendAddr, "--internal-listen", internal}, os.Stderr)
	readme, err := os.ReadFile(filepath.Join(hdctest.RepoRoot, "README.md"))
	if err != nil || os.WriteFile(filepath.Join(dir, "README.md"), readme, 0o600) != nil {
		t.Fatal(err)
	}
	careContext := regexp.MustCompile(`"care_context_id": "([^"]+)"`)
	var id string
	blocks := hdctest.DocBlocks(t, "README.md", "## A walkthrough with `hdc call`")
	for _, line := range blocks[0] {
		out := hdctest.RunLineIn(t, dir, strings.ReplaceAll(line, "<care_context_id>", id), env)
		if m := careContext.FindStringSubmatch(out); m != nil {
			id = m[1]
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "record.json")); err != nil || !strings.Contains(string(b), `"Bundle"`) {
		t.Fatalf("record.json: %v %.200s", err, b)
	}

	var receiver *hdctest.SyncBuffer
	for _, line := range blocks[1] {
		line = strings.ReplaceAll(line, "127.0.0.1:9999", hooks)
		if strings.Contains(line, "webhooks listen") {
			receiver = hdctest.StartBackground(t, dir, line, env)
			continue
		}
		hdctest.RunLineIn(t, dir, line, env)
	}
	testkit.Eventually(t, 30*time.Second, "the receiver to verify a delivery", func() bool {
		return receiver != nil && strings.Contains(receiver.String(), "signature verified")
	})
}

// TestObservabilityAsWritten runs the README's Observability section as
// written (hdc up on addresses of its own): the upload's spans, the
// edge's and the backend's, come out on hdc up's standard output, each
// in the trace TRACEPARENT names.
func TestObservabilityAsWritten(t *testing.T) {
	t.Parallel()
	hdc := hdctest.Binary(t, "hdc")
	dir := t.TempDir()
	env := []string{"PATH=" + filepath.Dir(hdc) + ":" + os.Getenv("PATH"), "HOME=" + dir}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# a note to upload\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lines := hdctest.DocBlock(t, "README.md", "## Observability")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "hdc up") {
		t.Fatalf("the section's commands changed: %q", lines)
	}
	up := hdctest.StartBackground(t, dir, lines[0]+" --listen "+testkit.FreeAddr(t)+" --metrics "+testkit.FreeAddr(t)+
		" --backend-listen "+testkit.FreeAddr(t)+" --internal-listen "+testkit.FreeAddr(t), env)
	testkit.Eventually(t, time.Minute, "hdc up's guide", func() bool { return strings.Contains(up.String(), "Ctrl-C") })
	hdctest.RunLineIn(t, dir, lines[1], env)
	trace := regexp.MustCompile(`"TraceID":\s*"0af7651916cd43dd8448eb211c80319c"`)
	testkit.Eventually(t, 30*time.Second, "the upload's spans on hdc up's output", func() bool {
		out := up.String()
		return len(trace.FindAllString(out, -1)) >= 6 && strings.Contains(out, `"hdc_jwe decrypt"`) &&
			strings.Count(out, `"POST /mr/api/v2/docs"`) >= 2
	})
}
