package hdctest

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
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/pki"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// webhookBackend is an hdc-backend process listening on free loopback
// ports, its data in a directory that survives restarts.
type webhookBackend struct {
	t        *testing.T
	cmd      *exec.Cmd
	Public   string // base URLs
	Internal string
	exited   chan struct{}
	logMu    sync.Mutex
	log      bytes.Buffer
	// creds are the credentials the test sent: its log may carry none.
	creds Credentials
}

// WebhookEnv is the environment of backends that deliver to loopback
// receivers on a compressed schedule.
var WebhookEnv = []string{
	"HDC_WEBHOOK_ALLOW_NETS=127.0.0.1/32",
	"HDC_WEBHOOK_WORKERS=8",
	"HDC_WEBHOOK_WORKSPACE_CONCURRENCY=4",
	"HDC_WEBHOOK_POLL_INTERVAL=50ms",
	"HDC_WEBHOOK_TIMEOUT=2s",
	"HDC_WEBHOOK_LEASE=3s",
	"HDC_WEBHOOK_BACKOFF_BASE=50ms",
	"HDC_WEBHOOK_BACKOFF_MAX=250ms",
}

// StartWebhookBackend starts hdc-backend on dir with env added and waits
// until it serves. The test's end stops it.
func StartWebhookBackend(t *testing.T, dir string, env ...string) *webhookBackend {
	t.Helper()
	b := &webhookBackend{t: t, exited: make(chan struct{})}
	b.cmd = exec.Command(Binary(t, "hdc-backend"))
	b.cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"HDC_DATA=" + dir, "HDC_LISTEN=127.0.0.1:0", "HDC_INTERNAL_LISTEN=127.0.0.1:0", "HDC_KEEPER=" + DataKeeper(t, dir),
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
		b.Stop()
		b.creds.Scan(t, "hdc-backend", b.logs())
	})
	select {
	case a := <-addrs:
		b.Public, b.Internal = "http://"+a[0], "http://"+a[1]
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

// Kill kills the process with SIGKILL and waits for it.
func (b *webhookBackend) Kill() {
	_ = b.cmd.Process.Signal(syscall.SIGKILL)
	<-b.exited
}

// Stop stops the process gracefully (SIGKILL after 20 s) and waits for it.
func (b *webhookBackend) Stop() {
	select {
	case <-b.exited:
		return
	default:
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(20 * time.Second):
		b.Kill()
	}
}

// Post sends a JSON body and returns the status and answer.
func (b *webhookBackend) Post(url, body string, headers ...string) (int, []byte) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	b.creds.NoteJSON([]byte(body))
	if strings.HasPrefix(url, b.Public) {
		AsEdge(req)
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

// QueueDepth scrapes the backend's count of pending deliveries, -1 when
// the scrape fails.
func (b *webhookBackend) QueueDepth() int {
	return ScrapeMetric(http.DefaultClient, b.Internal+contract.PathMetrics, queueDepth)
}

// queueDepth is the backend's count of deliveries still to be made: each
// stays pending, and counted, until its last attempt has an outcome.
const queueDepth = "hdc_backend_webhook_queue_depth"

// QueueDepth scrapes the stack backend's count of pending deliveries, -1
// when the scrape fails.
func (s *Stack) QueueDepth() int {
	return ScrapeMetric(s.InternalClient(pki.Scraper), s.Internal+contract.PathMetrics, queueDepth)
}

// AsEdge sets on req the hop headers the edge sets on every request (the
// client's address, a request id), for a test that plays the edge.
func AsEdge(req *http.Request) {
	req.Header.Set(contract.HeaderClientIP, "127.0.0.1")
	req.Header.Set(contract.HeaderRequestID, uuid.NewString())
}

// Subscribe registers a webhook as client of workspace, as the edge
// would forward it, and returns the subscription id.
func (b *webhookBackend) Subscribe(client identity.Credentials, body string) string {
	b.t.Helper()
	status, answer := b.Post(b.Public+contract.PathSubscriptions, body,
		contract.HeaderClientID, client.ClientID, contract.HeaderWorkspaceID, client.WorkspaceID)
	var reg struct{ ID string }
	if status != http.StatusOK || json.Unmarshal(answer, &reg) != nil {
		b.t.Fatalf("register %s: %d %s", body, status, answer)
	}
	return reg.ID
}

// CreateWebhookClient creates a client of workspace in the database in dir
// with the hdc command.
func CreateWebhookClient(t *testing.T, dir, workspace string) identity.Credentials {
	t.Helper()
	DataKeeper(t, dir) // hdc finds it in the data directory
	out, err := RunProgram(t, nil, Binary(t, "hdc"), "clients", "create", "--workspace", workspace, "--data", dir)
	if err != nil {
		t.Fatal(err)
	}
	var c identity.Credentials
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatalf("hdc clients create printed %s: %v", out, err)
	}
	return c
}

// WebhookDelivery is a request a webhookReceiver got.
type WebhookDelivery struct {
	At time.Time // when its body was read
	// Answered is when the receiver answered it 204, zero while it holds
	// it or when the sender gave up first.
	Answered time.Time
	Path     string
	Header   http.Header
	Body     []byte
	// verifyErr is the Standard Webhooks Go library's verdict.
	VerifyErr error
}

// WebhookReceiver is a subscriber on loopback. It verifies every request
// with the Standard Webhooks Go library and records it once its body is
// read; then, while its gate is closed, it does not answer until the
// connection goes away.
type WebhookReceiver struct {
	Srv      *httptest.Server
	key      []byte
	delay    time.Duration
	InFlight atomic.Int64

	mu   sync.Mutex
	got  []WebhookDelivery
	gate chan struct{} // closed: open
}

func NewWebhookReceiver(t *testing.T, key string, delay time.Duration) *WebhookReceiver {
	rc := &WebhookReceiver{key: []byte(key), delay: delay, gate: make(chan struct{})}
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
	rc.Srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.InFlight.Add(1)
		defer rc.InFlight.Add(-1)
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		rc.mu.Lock()
		n := len(rc.got)
		rc.got = append(rc.got, WebhookDelivery{At: time.Now(), Path: r.URL.Path, Header: r.Header.Clone(), Body: body, VerifyErr: wh.Verify(body, r.Header)})
		gate := rc.gate
		rc.mu.Unlock()
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		time.Sleep(rc.delay)
		w.WriteHeader(http.StatusNoContent)
		rc.mu.Lock()
		rc.got[n].Answered = time.Now()
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.Srv.Close)
	return rc
}

// Hold closes the gate: requests from now on are recorded but not answered.
func (rc *WebhookReceiver) Hold() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.gate = make(chan struct{})
}

// Release opens the gate.
func (rc *WebhookReceiver) Release() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	select {
	case <-rc.gate:
	default:
		close(rc.gate)
	}
}

func (rc *WebhookReceiver) Deliveries() []WebhookDelivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]WebhookDelivery(nil), rc.got...)
}

// DataKeeper returns the URL of the local keeper of the data directory
// dir, making its key file (keeperFile) on the first call, as hdc up does.
func DataKeeper(t testing.TB, dir string) string {
	t.Helper()
	url, err := keeper.CreateKeyFile(filepath.Join(dir, KeeperFile))
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// List returns client's subscriptions, as the edge would forward the
// request.
func (b *webhookBackend) List(client identity.Credentials) []struct{ Endpoint, DeliveryFormat string } {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.Public+contract.PathSubscriptions, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	AsEdge(req)
	req.Header.Set(contract.HeaderClientID, client.ClientID)
	req.Header.Set(contract.HeaderWorkspaceID, client.WorkspaceID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Subscriptions []struct {
			Endpoint       string `json:"endpoint"`
			DeliveryFormat string `json:"delivery_format"`
		} `json:"subscriptions"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK {
		b.t.Fatalf("list: %d %v", res.StatusCode, err)
	}
	subs := make([]struct{ Endpoint, DeliveryFormat string }, len(out.Subscriptions))
	for i, s := range out.Subscriptions {
		subs[i].Endpoint, subs[i].DeliveryFormat = s.Endpoint, s.DeliveryFormat
	}
	return subs
}
