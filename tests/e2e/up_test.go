package e2e

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestUpGuideWorksWhenPasted runs `hdc up` as a newcomer would, pastes every
// command of the guide it prints into a shell, and checks each succeeds;
// then it stops the stack with Ctrl-C and starts it again on the same data.
func TestUpGuideWorksWhenPasted(t *testing.T) {
	t.Parallel()
	hdc := hdctest.Binary(t, "hdc")
	dir := t.TempDir()
	// hdc up binds the addresses its flags name itself.
	listen, metrics, backendAddr, internal := testkit.FreeAddr(t), testkit.FreeAddr(t), testkit.FreeAddr(t), testkit.FreeAddr(t)
	env := []string{"PATH=" + filepath.Dir(hdc) + ":" + os.Getenv("PATH"), "HOME=" + dir,
		"XDG_CACHE_HOME=" + filepath.Join(dir, "cache"), "HDC_BACKEND_INTERNAL=https://" + internal,
		"HDC_ACCESS_TOKEN_TTL=40s"} // short enough for the refresh below: hdc call treats the last 30 s as expired
	args := []string{"up", "--listen", listen, "--metrics", metrics, "--backend-listen", backendAddr, "--internal-listen", internal}

	up := func() (*exec.Cmd, []string) { return startUp(t, hdc, dir, env, args, os.Stderr) }
	cmd, guide := up()

	creds := filepath.Join(dir, "data", "demo-credentials.json")
	fi, err := os.Stat(creds)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("demo credentials: %v, mode %v", err, fi.Mode())
	}
	var c map[string]string
	b, _ := os.ReadFile(creds)
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"base_url", "client_id", "client_secret", "kid", "encryption_key", "workspace_id"} {
		if c[k] == "" {
			t.Fatalf("demo-credentials.json lacks %s: %s", k, b)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# a file to upload\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// Paste each command of the guide; the retrieve line needs the id the
	// upload printed.
	var commands []string
	for _, l := range guide {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, hdc+" ") {
			commands = append(commands, l)
		}
	}
	if len(commands) < 4 {
		t.Fatalf("the guide has %d commands:\n%s", len(commands), strings.Join(guide, "\n"))
	}
	careContext := regexp.MustCompile(`"care_context_id": "([^"]+)"`)
	var id string
	paste := func(line string) string {
		line = strings.ReplaceAll(line, "<care_context_id from the upload>", id)
		sh := exec.Command("sh", "-c", line)
		sh.Dir, sh.Env = dir, env
		out, err := sh.CombinedOutput()
		if err != nil {
			t.Fatalf("pasted %q: %v\n%s", line, err, out)
		}
		return string(out)
	}
	for _, line := range commands {
		out := paste(line)
		if m := careContext.FindStringSubmatch(out); m != nil {
			id = m[1]
		}
		if strings.Contains(line, "/fhir/retrieve") && !strings.Contains(out, `"resourceType": "Bundle"`) {
			t.Fatalf("retrieve printed %s", out)
		}
	}
	// After the access token expires, hdc call refreshes it.
	testkit.Eventually(t, time.Minute, "hdc call's access token to expire", func() bool {
		return accessExpired(t, filepath.Join(dir, "cache", "hdc"))
	})
	if out := paste(commands[1]); !strings.Contains(out, "hooks") {
		t.Fatalf("after expiry: %s", out)
	}
	// What the demo did is in its workspace's trail, the key hdc up added
	// included, and the trail verifies.
	trail := paste(hdc + " audit list --data data --workspace " + c["workspace_id"])
	wantTrail(t, trail, "client_create", "key_add "+c["kid"], "login", "record_upload", "record_retrieve", "refresh")
	paste(hdc + " audit verify --data data")
	wantAdminAPI(t, paste, hdc, c["client_id"])

	// Ctrl-C stops it cleanly, and takes its admin file away; a second run
	// reuses the data.
	stopUp(t, cmd)
	if _, err := os.Stat(filepath.Join(dir, "data", "admin.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("hdc up left its admin file behind: %v", err)
	}
	_, guide2 := up()
	if !strings.Contains(strings.Join(guide2, "\n"), c["client_id"]) {
		t.Fatal("the second run did not reuse the demo client")
	}
	if out := paste(commands[1]); !strings.Contains(out, "hooks") {
		t.Fatalf("the data did not survive a restart: %s", out)
	}
}

// wantAdminAPI checks that the operator commands run on hdc up's data
// directory go through its Admin API as the local user, an operator with a
// certificate of the hop's authority (not direct mode), and that the guide's
// clients list found the demo client there.
func wantAdminAPI(t *testing.T, paste func(string) string, hdc, client string) {
	t.Helper()
	var me struct {
		Name, Role, Serial string
		Direct             bool
	}
	if out := paste(hdc + " whoami"); json.Unmarshal([]byte(out), &me) != nil || me.Role != "operator" || me.Serial == "" || me.Direct {
		t.Fatalf("hdc whoami on hdc up's data printed %s: not the Admin API's operator", out)
	}
	if out := paste(hdc + " clients list"); !strings.Contains(out, client) {
		t.Fatalf("hdc clients list through the Admin API printed %s, without the demo client", out)
	}
	if out := paste(hdc + " whoami --direct"); !strings.Contains(out, `"direct": true`) {
		t.Fatalf("hdc whoami --direct printed %s", out)
	}
}

// accessExpired reports whether every access token hdc call cached in dir
// has expired as hdc call reckons it: 30 s before its expires_in.
func accessExpired(t *testing.T, dir string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "tokens-*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no token cached by hdc call in %s: %v", dir, err)
	}
	for _, f := range files {
		var p struct {
			ExpiresIn  int64     `json:"expires_in"`
			ObtainedAt time.Time `json:"obtained_at"`
		}
		if b, err := os.ReadFile(f); err != nil || json.Unmarshal(b, &p) != nil {
			t.Fatalf("the token cache %s: %v", f, err)
		}
		if time.Now().Before(p.ObtainedAt.Add(time.Duration(p.ExpiresIn)*time.Second - 30*time.Second)) {
			return false
		}
	}
	return true
}

// wantTrail fails t unless the records hdc audit list printed (JSON
// lines) hold the actions want in that order, among others; an action
// written "action id" must concern the entity of that id.
func wantTrail(t *testing.T, listed string, want ...string) {
	t.Helper()
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(listed), "\n") {
		var r struct {
			Action string
			Entity struct{ ID string }
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("hdc audit list printed %q: %v", l, err)
		}
		got = append(got, r.Action, r.Action+" "+r.Entity.ID)
	}
	rest := got
	for _, w := range want {
		i := slices.Index(rest, w)
		if i < 0 {
			t.Fatalf("the trail lacks %q after what came before it; it holds:\n%s", w, listed)
		}
		rest = rest[i+1:]
	}
}

// startUp runs hdc with args (an hdc up command line) in dir, its standard
// error to stderr, and returns once it has printed its guide, with the
// guide's lines. The test's end kills it.
func startUp(t *testing.T, hdc, dir string, env, args []string, stderr io.Writer) (*exec.Cmd, []string) {
	t.Helper()
	cmd := exec.Command(hdc, args...)
	cmd.Dir, cmd.Env = dir, env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	// What hdc up says on its standard error is kept too, for the failure
	// of a start that ends before its guide.
	var said hdctest.SyncBuffer
	cmd.Stderr = io.MultiWriter(stderr, &said)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var guide []string
	out := hdctest.Lines(stdout)
	timeout := time.After(time.Minute)
	for {
		select {
		case line, ok := <-out:
			if !ok {
				t.Fatalf("hdc up exited before printing its guide: %v; it said:\n%s", cmd.Wait(), hdctest.Tail(said.String(), 4096))
			}
			guide = append(guide, line)
			if strings.Contains(line, "Ctrl-C") {
				go func() {
					for range out { // keep draining
					}
				}()
				return cmd, guide
			}
		case <-timeout:
			t.Fatalf("no guide after a minute; so far:\n%s", strings.Join(guide, "\n"))
		}
	}
}

// curlCouldNotConnect is curl's exit status when it could not connect.
const curlCouldNotConnect = 7

// TestUpAdminIsASocket (fourth review, finding 1): hdc up's edge serves its
// admin API on a unix socket in the data directory that only the user who
// ran it may open, and says so in its guide: another local user, even one
// who may enter the directory, cannot load a route into the edge (which
// would act with its hop certificate), and a TCP address is refused.
func TestUpAdminIsASocket(t *testing.T) {
	t.Parallel()
	hdc := hdctest.Binary(t, "hdc")
	dir := t.TempDir()
	listen, metrics, backendAddr, internal := testkit.FreeAddr(t), testkit.FreeAddr(t), testkit.FreeAddr(t), testkit.FreeAddr(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	args := []string{"up", "--listen", listen, "--metrics", metrics, "--backend-listen", backendAddr, "--internal-listen", internal}
	refused := exec.Command(hdc, append(args, "--admin", testkit.FreeAddr(t))...)
	refused.Dir, refused.Env = dir, env
	if out, err := refused.CombinedOutput(); err == nil || !strings.Contains(string(out), "unix socket") {
		t.Fatalf("hdc up --admin <a TCP address>: %v\n%s", err, out)
	}
	_, guide := startUp(t, hdc, dir, env, args, io.Discard)
	sock := filepath.Join(dir, "data", "edge-admin.sock")
	if !slices.ContainsFunc(guide, func(l string) bool { return strings.Contains(l, "curl --unix-socket "+sock+" ") }) {
		t.Fatalf("the guide does not name the admin socket %s:\n%s", sock, strings.Join(guide, "\n"))
	}
	fi, err := os.Lstat(sock)
	if err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()) {
		t.Fatalf("the admin socket: %v, %v; want a socket of mode 0600, the user's", err, fi.Mode())
	}
	resp, err := hdctest.UnixClient(sock).Get(hdctest.AdminURL + "/hdc/keys")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the user's own GET /hdc/keys on the socket: %v %v", err, resp)
	}
	resp.Body.Close()
	if os.Geteuid() != 0 {
		t.Skip("another user's attempt needs root, to run a process as that user")
	}
	for _, d := range []string{dir, filepath.Join(dir, "data")} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	probe := exec.Command("curl", "--silent", "--show-error", "--fail", "--unix-socket", sock, "-X", "PUT",
		"-H", "Content-Type: application/json", "--data", `{"handle":[{"handler":"static_response","body":"injected"}]}`,
		"http://localhost/config/apps/http/servers/srv0/routes/0")
	probe.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var exit *exec.ExitError
	if out, err := probe.CombinedOutput(); !errors.As(err, &exit) || exit.ExitCode() != curlCouldNotConnect {
		t.Fatalf("another user's PUT of a route on the admin socket: %v, want curl's exit status %d\n%s", err, curlCouldNotConnect, out)
	}
}

// TestUpLimitFlags: --upload-limit sets the backend's file limit, the
// edge's body cap follows it (twice), and each 413 states the limit hit;
// everything hdc up writes on stderr is JSON lines.
func TestUpLimitFlags(t *testing.T) {
	t.Parallel()
	hdc := hdctest.Binary(t, "hdc")
	dir := t.TempDir()
	listen, metrics, backendAddr, internal := testkit.FreeAddr(t), testkit.FreeAddr(t), testkit.FreeAddr(t), testkit.FreeAddr(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	var stderr hdctest.SyncBuffer
	startUp(t, hdc, dir, env, []string{"up", "--listen", listen, "--metrics", metrics, "--backend-listen", backendAddr,
		"--internal-listen", internal, "--upload-limit", "1MiB", "--log-level", "info"}, &stderr)
	file := filepath.Join(dir, "scan.bin")
	if err := os.WriteFile(file, make([]byte, 1536<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"plain, over the file limit", nil, "the file exceeds the upload limit of 1.0MiB"},
		{"encrypted, over the edge's cap", []string{"--encrypt"}, "this route's limit of 2.0MiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"call"}, tt.args...), "POST", "/mr/api/v2/docs", "--file", file)
			cmd := exec.Command(hdc, args...)
			cmd.Dir, cmd.Env = dir, env
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "413") || !strings.Contains(string(out), tt.want) {
				t.Fatalf("hdc %v: %v\n%s", args, err, out)
			}
		})
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if !json.Valid([]byte(line)) {
			t.Fatalf("hdc up wrote a line that is not JSON: %s", line)
		}
	}
}
