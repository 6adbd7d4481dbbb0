package scale

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/health-data-connect/hdc/backend/blob/blobtest"
	"github.com/health-data-connect/hdc/backend/store/postgres/pgtest"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// scaleBucket is the bucket the replicas share their blobs in.
const scaleBucket = "hdc-records"

// cluster is the scale-out deployment on loopback: two hdc-backend
// processes on one PostgreSQL database and one S3-compatible blob store
// (gofakes3, served by the test process), and two hdc-edge processes
// running the repository's Caddyfile, each in front of both backends, as
// the scale-out section of docs/deploy.md deploys them: each edge balances the
// requests over the backends that pass its health checks, and looks keys
// up in and follows the key plane of the one that answers.
type cluster struct {
	t     *testing.T
	ops   *hdctest.Stack // the operator: runs hdc, starts the processes
	edges [2]*hdctest.Stack
	// edgeMetrics are the edges' metrics listeners.
	edgeMetrics [2]string
	edgeProcs   [2]*hdctest.Process
	backends    [2]*replica
	database    string
	s3          *s3.Client
	kms         hdctest.KMS
}

// replica is one hdc-backend process.
type replica struct {
	name             string
	public, internal string // base URLs
	proc             *hdctest.Process
	data             string
	bin              string
	env              []string
}

// startCluster starts the deployment: both backends at once (their
// migrations race on the empty database), with backendEnv added to their
// environment, then both edges.
func startCluster(t *testing.T, backendEnv ...string) *cluster {
	t.Helper()
	return startClusterEnv(t, backendEnv, [2][]string{})
}

// startClusterEnv is startCluster with edgeEnv[i] added to edge i's
// environment.
func startClusterEnv(t *testing.T, backendEnv []string, edgeEnv [2][]string) *cluster {
	t.Helper()
	c := &cluster{t: t, database: pgtest.URL(t)}
	backendBin, edgeBin := hdctest.Binary(t, "hdc-backend"), hdctest.Binary(t, "hdc-edge")
	s3Endpoint, s3Client := blobtest.S3Server(t, scaleBucket)
	c.s3 = s3Client

	dir := t.TempDir()
	// Every process's secrets are sealed under a key of the KMS.
	c.kms = hdctest.StartKMS(t)
	c.ops = &hdctest.Stack{T: t, Dir: dir, Keeper: c.kms.URL(0), HTTP: &http.Client{Timeout: time.Minute}}
	answers := c.ops.CheckAnswers() // every answer of the edges against docs/openapi.yaml
	c.ops.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "HDC_KEEPER=" + c.ops.Keeper,
		"HDC_DATA=" + filepath.Join(dir, "ops"), "HDC_DATABASE_URL=" + c.database, "HDC_KEY_REGISTRY="}, c.kms.Env()...)

	hop := filepath.Join(dir, "tls")
	c.ops.Hop = hop
	c.ops.HDC(nil, "tls", "init", "--dir", hop)
	c.ops.HDC(nil, "tls", "issue", "--role", "scraper", "--dir", hop)
	// Each backend and each edge has a certificate of its own, as the
	// fleet's docs issue them.
	for i := range 2 {
		for _, role := range []string{"backend", "edge"} {
			c.ops.HDC(nil, "tls", "issue", "--role", role, "--name", fmt.Sprint(role, "-", i+1), "--dir", hop)
		}
	}
	blobURL := "s3://" + scaleBucket + "/records?path_style=true&region=us-east-1&endpoint=" + url.QueryEscape(s3Endpoint)
	for i := range c.backends {
		publicSock, public := testkit.ListenFile(t)
		internalSock, internal := testkit.ListenFile(t)
		r := &replica{name: fmt.Sprint("hdc-backend-", i+1), public: "http://" + public, internal: "https://" + internal,
			data: filepath.Join(dir, fmt.Sprint("backend-", i+1)), bin: backendBin}
		r.env = append([]string{
			"HDC_LISTEN=fd/3", "HDC_INTERNAL_LISTEN=fd/4", "HDC_DATA=" + r.data,
			"HDC_BLOB_URL=" + blobURL, "AWS_ACCESS_KEY_ID=hdc", "AWS_SECRET_ACCESS_KEY=hdc-test-secret",
		}, append(append(hdctest.HopEnv(hop, fmt.Sprint("backend-", i+1)), hdctest.WebhookEnv...), backendEnv...)...)
		c.startReplica(r, publicSock, internalSock)
		c.backends[i] = r
	}
	c.ops.Internal = c.backends[0].internal // where the operator's checks look keys up
	for i := range c.backends {
		c.ops.WaitFor(fmt.Sprint("backend ", i+1), func() bool { return c.ready(i) })
	}
	for i := range c.edges {
		edgeSock, edgeAddr := testkit.ListenFile(t)
		metricsSock, metrics := testkit.ListenFile(t)
		c.edgeMetrics[i] = "http://" + metrics
		c.ops.EdgeMetrics = append(c.ops.EdgeMetrics, c.edgeMetrics[i]) // a key is used once both edges have it
		c.edgeProcs[i] = c.ops.Start(fmt.Sprint("hdc-edge-", i+1), edgeBin, []string{"run", "--config", filepath.Join(hdctest.RepoRoot, "Caddyfile")}, append([]string{
			"HDC_SITE=http://", "HDC_BIND=fd/3", "HDC_METRICS_BIND=fd/4",
			"HDC_EDGE_ADMIN=" + hdctest.AdminAddress(filepath.Join(dir, fmt.Sprint("edge-", i+1, "-admin.sock"))),
			"HDC_BACKEND=" + c.addresses(i, func(r *replica) string { return strings.TrimPrefix(r.public, "http://") }),
			"HDC_BACKEND_INTERNAL=" + c.addresses(i, func(r *replica) string { return r.internal }),
			"HDC_UPLOAD_MAX_BODY=16MiB",
			fmt.Sprint("HDC_RATELIMIT_EDGES=", len(c.edges)),
		}, append(append(c.ops.SharedRedisEnv(), // the test Redis, when there is one
			hdctest.HopEnv(hop, fmt.Sprint("edge-", i+1))...), edgeEnv[i]...)...), edgeSock, metricsSock)
		edgeSock.Close() // the edge alone holds its listeners, which close when it dies
		metricsSock.Close()
		e := &hdctest.Stack{T: t, Dir: dir, Edge: "http://" + edgeAddr, Env: c.ops.Env, HTTP: c.ops.HTTP}
		answers.AddEdge(e.Edge)
		c.ops.WaitFor(fmt.Sprint("edge ", i+1), func() bool { return c.get(e.Edge+"/no-such-route") == http.StatusNotFound })
		c.edges[i] = e
	}
	return c
}

// get returns the status of a GET, 0 when it gets no answer.
func (c *cluster) get(u string) int {
	resp, err := c.ops.HTTP.Get(u)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// startReplica starts r's process on the listeners given, which only the
// process then holds: when it dies, its listeners close, as a crashed
// process's do, and the edges' connections to them are refused.
func (c *cluster) startReplica(r *replica, public, internal *os.File) {
	r.proc = c.ops.Start(r.name, r.bin, nil, r.env, public, internal)
	public.Close()
	internal.Close()
}

// addresses lists every backend's address, as addr gives it, edge i's
// own first (the key plane asks the first one first), space-separated.
func (c *cluster) addresses(i int, addr func(*replica) string) string {
	var list []string
	for j := range c.backends {
		list = append(list, addr(c.backends[(i+j)%len(c.backends)]))
	}
	return strings.Join(list, " ")
}

// ready reports whether backend i's internal listener says it is ready.
func (c *cluster) ready(i int) bool {
	resp, err := c.ops.InternalClient("").Get(c.backends[i].internal + contract.PathReady)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// kill stops backend i with SIGKILL, as a crash would.
func (c *cluster) kill(i int) {
	p := c.backends[i].proc
	_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.Done
	// The operator's checks ask a survivor; the edges follow the key
	// plane of the backends that answer.
	if c.ops.Internal == c.backends[i].internal {
		c.ops.Internal = c.backends[(i+1)%len(c.backends)].internal
	}
}

// restart starts backend i again on its addresses, and waits until it is
// ready.
func (c *cluster) restart(i int) {
	r := c.backends[i]
	var files [2]*os.File
	for n, base := range []string{r.public, r.internal} {
		_, addr, _ := strings.Cut(base, "://")
		// The port was the dead process's a moment ago; nothing else on
		// loopback takes it meanwhile, but its connections may linger.
		testkit.Eventually(c.t, 10*time.Second, "listening on "+addr+" again", func() bool {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return false
			}
			defer ln.Close()
			files[n], err = ln.(*net.TCPListener).File()
			return err == nil
		})
	}
	c.startReplica(r, files[0], files[1])
	c.ops.WaitFor(fmt.Sprint("backend ", i+1, " restarted"), func() bool { return c.ready(i) })
}

// metric scrapes a counter or gauge without labels from backend i, -1 when
// it cannot.
func (c *cluster) metric(i int, name string) int {
	return hdctest.ScrapeMetric(c.ops.InternalClient(pki.Scraper), c.backends[i].internal+contract.PathMetrics, name)
}

// metricSum is metric summed over the backends that answer: an edge
// balances its requests over them.
func (c *cluster) metricSum(name string) int {
	sum := 0
	for i := range c.backends {
		sum += max(c.metric(i, name), 0)
	}
	return sum
}

// timedReceiver is a webhookReceiver whose requests are also timed, to
// check that no delivery is attempted by two replicas at once.
type timedReceiver struct {
	*hdctest.WebhookReceiver
	url string

	mu   sync.Mutex
	reqs []timedRequest
}

// timedRequest is one request a subscriber received, from its arrival to
// its answer (or to the sender hanging up).
type timedRequest struct {
	id         string
	start, end time.Time
}

func newTimedReceiver(t *testing.T, key string, delay time.Duration) *timedReceiver {
	rc := &timedReceiver{WebhookReceiver: hdctest.NewWebhookReceiver(t, key, delay)}
	inner := rc.Srv.Config.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		inner.ServeHTTP(w, r)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, timedRequest{id: r.Header.Get("webhook-id"), start: start, end: time.Now()})
		rc.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL
	return rc
}

// overlaps counts the pairs of requests that carry one webhook-id and were
// in progress at the same time.
func (rc *timedReceiver) overlaps() int {
	rc.mu.Lock()
	byID := map[string][]timedRequest{}
	for _, r := range rc.reqs {
		byID[r.id] = append(byID[r.id], r)
	}
	rc.mu.Unlock()
	n := 0
	for _, rs := range byID {
		sort.Slice(rs, func(i, j int) bool { return rs[i].start.Before(rs[j].start) })
		for i := 1; i < len(rs); i++ {
			for j := range i {
				if rs[i].start.Before(rs[j].end) {
					n++
				}
			}
		}
	}
	return n
}
