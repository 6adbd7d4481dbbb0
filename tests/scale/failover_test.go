package scale

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// loadWorkers upload at once through both edges in TestFleetFailover.
const loadWorkers = 6

// TestFleetFailover (fleet failover): every edge fronts both backends, as
// the reference Caddyfile deploys them. A backend killed under load costs
// only the requests it held, the key plane keeps flowing through the
// other, a backend restarted takes traffic again with no edge touched, the
// key feed's gauge reads 1 as soon as the feed answers, and an edge killed
// costs its own clients' connections alone.
func TestFleetFailover(t *testing.T) {
	c := startCluster(t)
	client := c.ops.NewClient("failover")
	keys := c.ops.NewClient("failover-keys") // its key changes during the outage
	tk := c.edges[0].Login(client, false, "")

	t.Run("BackendKilledUnderLoad", func(t *testing.T) { c.backendKilledUnderLoad(t, client, keys, tk) })
	t.Run("BackendBack", func(t *testing.T) { c.backendBack(t, tk) })
	t.Run("FeedGaugeReadsOneAtTheFirstAnswer", func(t *testing.T) { c.feedGaugeTruth(t) })
	t.Run("EdgeKilled", func(t *testing.T) { c.edgeKilled(t, client, tk) })
}

// upload is one encrypted upload of the load and its outcome.
type upload struct {
	edge       int
	start, end time.Time
	status     int // 0: no answer
	id         string
	file       []byte
}

// uploadLoad is loadWorkers workers uploading through both edges.
type uploadLoad struct {
	mu   sync.Mutex
	done []upload
	sent atomic.Int64
	stop chan struct{}
	wg   sync.WaitGroup
}

// startUploads starts the workers, each sealing a random file with
// go-jose and sending it to each edge in turn.
func (c *cluster) startUploads(t *testing.T, client *hdctest.APIClient, tk hdctest.Tokens) *uploadLoad {
	l := &uploadLoad{stop: make(chan struct{})}
	for w := range loadWorkers {
		l.wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				u := upload{edge: (w + i) % len(c.edges), file: make([]byte, 24<<10)}
				_, _ = rand.Read(u.file)
				u.start = time.Now()
				u.status, u.id = c.sealedUpload(t, c.edges[u.edge], client, tk, u.file)
				u.end = time.Now()
				l.mu.Lock()
				l.done = append(l.done, u)
				l.mu.Unlock()
				l.sent.Add(1)
			}
		})
	}
	return l
}

// halt stops the workers and returns every upload they made.
func (l *uploadLoad) halt() []upload {
	close(l.stop)
	l.wg.Wait()
	return l.done
}

// sealedUpload uploads file in a compact envelope go-jose seals under
// client's key, and opens the answer with go-jose: its status, and the
// record's id when it is 200.
func (c *cluster) sealedUpload(t *testing.T, e *hdctest.Stack, client *hdctest.APIClient, tk hdctest.Tokens, file []byte) (int, string) {
	body := hdctest.GoJoseSeal(t, client, hdctest.JSONUpload(file))
	r, err := e.Request(e.Edge, "POST", hdctest.UploadPath, []byte(body), map[string]string{
		hdctest.Authorization: "Bearer " + tk.AccessToken, hdctest.JWEHeader: "JWE", "Content-Type": "application/jose"})
	if err != nil || r.Status != http.StatusOK {
		if err != nil {
			return 0, ""
		}
		return r.Status, ""
	}
	obj, err := hdctest.ParseEnvelope(r.Body, true)
	if err != nil {
		t.Errorf("an upload's answer is no compact envelope: %v", err)
		return r.Status, ""
	}
	plain, err := obj.Decrypt([]byte(client.Key + client.Key))
	var m struct {
		ID string `json:"care_context_id"`
	}
	if err != nil || json.Unmarshal(plain, &m) != nil || m.ID == "" {
		t.Errorf("an upload's answer does not open to a record: %v", err)
	}
	return r.Status, m.ID
}

// backendKilledUnderLoad kills backend 2 while the workers upload through
// both edges, and changes keys during the outage.
func (c *cluster) backendKilledUnderLoad(t *testing.T, client, keys *hdctest.APIClient, tk hdctest.Tokens) {
	load := c.startUploads(t, client, tk)
	testkit.Grows(t, &load.sent, 40, "40 uploads before the kill")
	held := c.metric(1, `hdc_backend_http_requests_in_flight{listener="public"}`)
	killed := time.Now()
	c.kill(1)
	dead := time.Now()

	gauge := c.watchFeedGauges()
	accept, refuse := c.timeChanges(t, keys, 3)
	zeros := gauge()
	var noticed time.Time
	testkit.Eventually(t, 10*time.Second, "both edges' active health checks to find backend 2 down", func() bool {
		noticed = c.healthNoticed(c.backends[1])
		return !noticed.IsZero()
	})
	testkit.Grows(t, &load.sent, 40, "40 uploads after that")
	uploads := load.halt()

	var failed, before []upload
	ok := 0
	for _, u := range uploads {
		switch {
		case u.status == http.StatusOK:
			ok++
		case u.start.After(noticed):
			t.Errorf("an upload sent %v after the edges' health checks noticed the kill failed: %d", u.start.Sub(noticed), u.status)
			fallthrough
		default:
			failed = append(failed, u)
			if u.start.Before(dead) {
				before = append(before, u)
			}
		}
	}
	statuses := map[int]int{}
	for _, u := range failed {
		statuses[u.status]++
	}
	if len(failed) > loadWorkers {
		t.Errorf("%d uploads failed; at most the %d in flight at the kill may", len(failed), loadWorkers)
	}
	for _, d := range append(accept, refuse...) {
		if d > time.Second {
			t.Errorf("a key change during the outage took %v to reach both edges (accepted %v, refused %v)", d, accept, refuse)
		}
	}
	if zeros > 0 {
		t.Errorf("an edge's hdc_edge_key_feed_up read 0 %d times during the outage: its feed did not fail over", zeros)
	}
	t.Logf("%d uploads through both edges, %d answered 200; backend 2 SIGKILLed (gone %v after the signal) with %d requests in flight on its public listener; %d uploads failed (by status, 0 for no answer: %v; %d of them sent before it died, the rest on its connections in the moment after), of %d workers; both edges' active health checks had marked it down %v after the kill, and no upload sent after that failed",
		len(uploads), ok, dead.Sub(killed).Round(time.Millisecond), held, len(failed), statuses, len(before), loadWorkers, noticed.Sub(killed).Round(time.Millisecond))
	t.Logf("during the outage, from hdc keys rotate and retire returning to both edges accepting and refusing: %v and %v; the edges' key feed gauges sampled every 50 ms read 1 throughout", accept, refuse)
	c.checkKept(t, client, uploads)
}

// watchFeedGauges samples both edges' hdc_edge_key_feed_up until the
// function it returns is called, which returns how many samples read 0.
func (c *cluster) watchFeedGauges() func() int {
	var zeros atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			for _, m := range c.edgeMetrics {
				if hdctest.ScrapeMetric(c.ops.HTTP, m+"/metrics", "hdc_edge_key_feed_up") == 0 {
					zeros.Add(1)
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return func() int {
		close(stop)
		<-done
		return int(zeros.Load())
	}
}

// healthNoticed returns when both edges' active health checks had first
// logged a failure of r's public listener (Caddy's "HTTP request
// failed"), the zero time while one has not.
func (c *cluster) healthNoticed(r *replica) time.Time {
	host := strings.TrimPrefix(r.public, "http://")
	var last time.Time
	for _, p := range c.edgeProcs {
		first := firstHealthFailure(p.Out.String(), host)
		if first.IsZero() {
			return first
		}
		if first.After(last) {
			last = first
		}
	}
	return last
}

// firstHealthFailure returns the time of the first line of a Caddy log
// where its active health checker found host down.
func firstHealthFailure(log, host string) time.Time {
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			TS                float64
			Logger, Msg, Host string
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "HTTP request failed" &&
			strings.HasSuffix(line.Logger, "health_checker.active") && line.Host == host {
			return time.Unix(0, int64(line.TS*1e9))
		}
	}
	return time.Time{}
}

// checkKept retrieves every upload answered 200, through each edge in
// turn, and checks its DocumentReference against the file (the first two
// with npm fhir and fhirpath too), and that the file is in the bucket.
func (c *cluster) checkKept(t *testing.T, client *hdctest.APIClient, uploads []upload) {
	t.Helper()
	tks := [2]hdctest.Tokens{c.edges[0].Login(client, false, ""), c.edges[1].Login(client, false, "")}
	kept := 0
	for _, u := range uploads {
		if u.status != http.StatusOK {
			continue
		}
		e := c.edges[kept%2]
		r := e.Send(client, false, "GET", hdctest.RetrievePath+"?identifier="+url.QueryEscape(u.id), nil, hdctest.Bearer(tks[kept%2]))
		if kept < 2 {
			hdctest.CheckRecord(t, r, u.file)
		} else if r.Status != http.StatusOK {
			t.Fatalf("record %s, answered 200 at upload, is lost: %s", u.id, r)
		} else {
			hdctest.CheckDocument(t, r.JSON(t), u.file)
		}
		sum := sha256.Sum256(u.file)
		key := hex.EncodeToString(sum[:])
		head, err := c.s3.HeadObject(t.Context(), &s3.HeadObjectInput{
			Bucket: aws.String(scaleBucket), Key: aws.String("records/" + key[:2] + "/" + key)})
		if err != nil || aws.ToInt64(head.ContentLength) != int64(len(u.file)) {
			t.Fatalf("record %s's file is not in the bucket: %v", u.id, err)
		}
		kept++
	}
	t.Logf("all %d uploads answered 200 retrieved through both edges with their size and SHA-1, and their files in the bucket", kept)
}

// backendBack restarts backend 2, touching no edge, and waits until each
// edge has sent it requests.
func (c *cluster) backendBack(t *testing.T, tk hdctest.Tokens) {
	c.restart(1)
	ready := time.Now()
	const served = `hdc_backend_http_requests_total{code="200",listener="public",route="GET /notification/v1/connect/webhook/subscriptions"}`
	for i, e := range c.edges {
		testkit.Eventually(t, 30*time.Second, fmt.Sprintf("edge %d to send requests to the restarted backend 2", i+1), func() bool {
			before := max(c.metric(1, served), 0)
			for range 10 {
				if r := e.Do("GET", hdctest.SubsPath, nil, hdctest.Bearer(tk)); r.Status != http.StatusOK {
					t.Fatalf("edge %d: %s", i+1, r)
				}
			}
			return c.metric(1, served) > before
		})
		t.Logf("edge %d sends requests to the restarted backend 2 %v after it was ready", i+1, time.Since(ready).Round(time.Millisecond))
	}
}

// feedGaugeTruth stops both backends, waits until both edges' feed gauge
// reads 0, starts one again, and times the gauge's return to 1.
func (c *cluster) feedGaugeTruth(t *testing.T) {
	gauges := func(want int) bool {
		for _, m := range c.edgeMetrics {
			if hdctest.ScrapeMetric(c.ops.HTTP, m+"/metrics", "hdc_edge_key_feed_up") != want {
				return false
			}
		}
		return true
	}
	c.kill(0)
	c.kill(1)
	testkit.Eventually(t, 10*time.Second, "both edges' hdc_edge_key_feed_up to read 0 with no backend", func() bool { return gauges(0) })
	c.restart(0)
	ready := time.Now()
	testkit.Eventually(t, 10*time.Second, "both edges' hdc_edge_key_feed_up to read 1", func() bool { return gauges(1) })
	up := time.Since(ready)
	// The feed asks again within its retry pause (1 s) and its first
	// answer sets the gauge.
	if up > 3*time.Second {
		t.Errorf("hdc_edge_key_feed_up read 1 %v after the backend was ready, over the feed's retry pause and 2 s", up)
	}
	t.Logf("with both backends down both edges' hdc_edge_key_feed_up read 0; backend 1 restarted, it read 1 on both %v after the backend's /readyz answered", up.Round(time.Millisecond))
	c.restart(1)
}

// edgeKilled kills edge 2 while a client has a request in flight to it,
// and shows what that client sees: its connection ends without an
// answer, a new connection is refused, and edge 1 serves it as before.
func (c *cluster) edgeKilled(t *testing.T, client *hdctest.APIClient, tk hdctest.Tokens) {
	addr := strings.TrimPrefix(c.edges[1].Edge, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// An upload whose body has only begun to arrive.
	head := "POST " + hdctest.UploadPath + " HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + tk.AccessToken +
		"\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{\"file\":\""
	if _, err := conn.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	p := c.edgeProcs[1]
	_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.Done
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, readErr := conn.Read(make([]byte, 512))
	if n != 0 || readErr == nil || errors.Is(readErr, os.ErrDeadlineExceeded) {
		t.Fatalf("the client of the killed edge read %d bytes, %v; want its connection ended without an answer", n, readErr)
	}
	_, dialErr := net.DialTimeout("tcp", addr, 5*time.Second)
	if dialErr == nil || !strings.Contains(dialErr.Error(), "refused") {
		t.Fatalf("a new connection to the killed edge: %v; want it refused", dialErr)
	}
	r := c.edges[0].Do("GET", hdctest.SubsPath, nil, hdctest.Bearer(tk))
	if r.Status != http.StatusOK {
		t.Fatalf("edge 1 after edge 2 was killed: %s", r)
	}
	t.Logf("edge 2 SIGKILLed: its client with an upload in flight read %v, with no HTTP answer; a new connection: %v; edge 1 served the same token: %d", readErr, dialErr, r.Status)
}
