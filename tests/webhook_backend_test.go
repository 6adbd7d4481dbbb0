package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/keeper"
)

// webhookBackend is an hdc-backend process listening on free loopback
// ports, its data in a directory that survives restarts.
type webhookBackend struct {
	t        *testing.T
	cmd      *exec.Cmd
	public   string // base URLs
	internal string
	exited   chan struct{}
	logMu    sync.Mutex
	log      bytes.Buffer
	// creds are the credentials the test sent: its log may carry none.
	creds credentials
}

// webhookEnv is the environment of backends that deliver to loopback
// receivers on a compressed schedule.
var webhookEnv = []string{
	"HDC_WEBHOOK_ALLOW_NETS=127.0.0.1/32",
	"HDC_WEBHOOK_WORKERS=8",
	"HDC_WEBHOOK_WORKSPACE_CONCURRENCY=4",
	"HDC_WEBHOOK_POLL_INTERVAL=50ms",
	"HDC_WEBHOOK_TIMEOUT=2s",
	"HDC_WEBHOOK_LEASE=3s",
	"HDC_WEBHOOK_BACKOFF_BASE=50ms",
	"HDC_WEBHOOK_BACKOFF_MAX=250ms",
}

// startWebhookBackend starts hdc-backend on dir with env added and waits
// until it serves. The test's end stops it.
func startWebhookBackend(t *testing.T, dir string, env ...string) *webhookBackend {
	t.Helper()
	b := &webhookBackend{t: t, exited: make(chan struct{})}
	b.cmd = exec.Command(binary(t, "hdc-backend"))
	b.cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"HDC_DATA=" + dir, "HDC_LISTEN=127.0.0.1:0", "HDC_INTERNAL_LISTEN=127.0.0.1:0", "HDC_KEEPER=" + dataKeeper(t, dir),
		"AWS_EC2_METADATA_DISABLED=true", "HDC_LOG_LEVEL=debug",
	}, env...)
	stderr, err := b.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrs := make(chan [2]string, 1)
	go func() {
		// Read every log line (the process blocks on a full pipe) and pick
		// the listeners' addresses from the "serving" line.
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			b.logMu.Lock()
			b.log.Write(sc.Bytes())
			b.log.WriteByte('\n')
			b.logMu.Unlock()
			var line struct{ Msg, Public, Internal string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving" {
				addrs <- [2]string{line.Public, line.Internal}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = b.cmd.Wait()
		close(b.exited)
	}()
	t.Cleanup(func() {
		b.stop()
		b.creds.scan(t, "hdc-backend", b.logs())
	})
	select {
	case a := <-addrs:
		b.public, b.internal = "http://"+a[0], "http://"+a[1]
	case <-b.exited:
		t.Fatalf("hdc-backend exited:\n%s", b.logs())
	case <-time.After(30 * time.Second):
		t.Fatalf("hdc-backend did not start:\n%s", b.logs())
	}
	return b
}

func (b *webhookBackend) logs() string {
	b.logMu.Lock()
	defer b.logMu.Unlock()
	return b.log.String()
}

// kill kills the process with SIGKILL and waits for it.
func (b *webhookBackend) kill() {
	_ = b.cmd.Process.Signal(syscall.SIGKILL)
	<-b.exited
}

// stop stops the process gracefully (SIGKILL after 20 s) and waits for it.
func (b *webhookBackend) stop() {
	select {
	case <-b.exited:
		return
	default:
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(20 * time.Second):
		b.kill()
	}
}

// post sends a JSON body and returns the status and answer.
func (b *webhookBackend) post(url, body string, headers ...string) (int, []byte) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	b.creds.noteJSON([]byte(body))
	if strings.HasPrefix(url, b.public) {
		asEdge(req)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	return res.StatusCode, answer
}

// queueDepth scrapes the backend's count of pending deliveries, -1 when
// the scrape fails.
func (b *webhookBackend) queueDepth() int {
	res, err := http.Get(b.internal + contract.PathMetrics)
	if err != nil {
		return -1
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "hdc_backend_webhook_queue_depth "); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
	}
	return -1
}

// asEdge sets on req the hop headers the edge sets on every request (the
// client's address, a request id), for a test that plays the edge.
func asEdge(req *http.Request) {
	req.Header.Set(contract.HeaderClientIP, "127.0.0.1")
	req.Header.Set(contract.HeaderRequestID, uuid.NewString())
}

// subscribe registers a webhook as client of workspace, as the edge
// would forward it, and returns the subscription id.
func (b *webhookBackend) subscribe(client identity.Credentials, body string) string {
	b.t.Helper()
	status, answer := b.post(b.public+contract.PathSubscriptions, body,
		contract.HeaderClientID, client.ClientID, contract.HeaderWorkspaceID, client.WorkspaceID)
	var reg struct{ ID string }
	if status != http.StatusOK || json.Unmarshal(answer, &reg) != nil {
		b.t.Fatalf("register %s: %d %s", body, status, answer)
	}
	return reg.ID
}

// createWebhookClient creates a client of workspace in the database in dir
// with the hdc command.
func createWebhookClient(t *testing.T, dir, workspace string) identity.Credentials {
	t.Helper()
	dataKeeper(t, dir) // hdc finds it in the data directory
	out, err := runProgram(t, nil, binary(t, "hdc"), "clients", "create", "--workspace", workspace, "--data", dir)
	if err != nil {
		t.Fatal(err)
	}
	var c identity.Credentials
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatalf("hdc clients create printed %s: %v", out, err)
	}
	return c
}

// webhookDelivery is a request a webhookReceiver got.
type webhookDelivery struct {
	at     time.Time // when its body was read
	path   string
	header http.Header
	body   []byte
	// verifyErr is the Standard Webhooks Go library's verdict.
	verifyErr error
}

// webhookReceiver is a subscriber on loopback. It verifies every request
// with the Standard Webhooks Go library and records it once its body is
// read; then, while its gate is closed, it does not answer until the
// connection goes away.
type webhookReceiver struct {
	srv      *httptest.Server
	key      []byte
	delay    time.Duration
	inFlight atomic.Int64

	mu   sync.Mutex
	got  []webhookDelivery
	gate chan struct{} // closed: open
}

func newWebhookReceiver(t *testing.T, key string, delay time.Duration) *webhookReceiver {
	rc := &webhookReceiver{key: []byte(key), delay: delay, gate: make(chan struct{})}
	close(rc.gate)
	// A subscriber passes its signing key as it registered it: a whsec_
	// secret as the string, which the library decodes, else as raw bytes.
	wh, err := standardwebhooks.NewWebhookRaw(rc.key)
	if strings.HasPrefix(key, "whsec_") {
		wh, err = standardwebhooks.NewWebhook(key)
	}
	if err != nil {
		t.Fatal(err)
	}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.inFlight.Add(1)
		defer rc.inFlight.Add(-1)
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		rc.mu.Lock()
		rc.got = append(rc.got, webhookDelivery{at: time.Now(), path: r.URL.Path, header: r.Header.Clone(), body: body, verifyErr: wh.Verify(body, r.Header)})
		gate := rc.gate
		rc.mu.Unlock()
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		time.Sleep(rc.delay)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// hold closes the gate: requests from now on are recorded but not answered.
func (rc *webhookReceiver) hold() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.gate = make(chan struct{})
}

// release opens the gate.
func (rc *webhookReceiver) release() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	select {
	case <-rc.gate:
	default:
		close(rc.gate)
	}
}

func (rc *webhookReceiver) deliveries() []webhookDelivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]webhookDelivery(nil), rc.got...)
}

// dataKeeper returns the URL of the local keeper of the data directory
// dir, making its key file (keeperFile) on the first call, as hdc up does.
func dataKeeper(t testing.TB, dir string) string {
	t.Helper()
	url, err := keeper.CreateKeyFile(filepath.Join(dir, keeperFile))
	if err != nil {
		t.Fatal(err)
	}
	return url
}
