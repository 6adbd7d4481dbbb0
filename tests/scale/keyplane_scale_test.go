package scale

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// keyPlaneScaleEnv turns TestKeyPlaneScale on: it takes minutes and a
// million rows, so it is a measurement run on demand, not a CI test.
const keyPlaneScaleEnv = "HDC_KEYPLANE_SCALE"

// TestKeyPlaneScale measures the key plane in the scale-out shape (two
// backends on PostgreSQL, two edges) and logs each figure
// docs/performance.md gives:
//
//	HDC_KEYPLANE_SCALE=1 HDC_TEST_POSTGRES_URL=… go test -run TestKeyPlaneScale -v -timeout 60m ./tests/scale/
//
// hdc keys add with 1,000 and then 1,000,000 keys in the database; an
// edge's resident memory above idle with 10,000 kids in use, and the
// latency of a kid's first use against a cached one's; the time from hdc
// keys rotate and retire returning to both edges accepting and refusing,
// over 100 changes, and over 20 right after the backends' LISTEN
// connections are cut; and a client's latency while 1,000 requests a second
// with random kids hit its edge for 10 s, against a run alone and a run
// beside another client's 1,000 requests a second with its cached kid
// (what the same load costs the machine when no kid is unknown).
func TestKeyPlaneScale(t *testing.T) {
	if os.Getenv(keyPlaneScaleEnv) == "" {
		t.Skipf("set %s=1 to measure the key plane at scale (minutes, a million rows)", keyPlaneScaleEnv)
	}
	// Edge 1 looks up as fast as it is asked, to fill its cache with
	// 10,000 kids quickly; edge 2 has the default limit, for the flood.
	c := startClusterEnv(t, nil, [2][]string{{"HDC_KEY_LOOKUP_RATE=1000000", "HDC_KEY_LOOKUP_BURST=1000000"}, nil})
	owner := c.ops.NewClient("key-plane-scale")

	t.Logf("hdc keys add with about 1,000 keys: %s", quantiles(c.timeKeysAdd(t, owner, 1000, 50)))
	c.seedKeys(t, owner, 1_000_000)
	t.Logf("hdc keys add with about 1,000,000 keys: %s", quantiles(c.timeKeysAdd(t, owner, 0, 50)))

	kids := c.importKeys(t, owner, 11_000)
	edge := c.edges[0]
	tk := edge.Login(owner, false, "")
	idle := edgeRSS(t, c.ops, "hdc-edge-1")
	c.useKids(t, edge, tk, kids[:10_000], 8)
	inUse := edgeRSS(t, c.ops, "hdc-edge-1")
	t.Logf("edge 1's resident memory: %d MiB idle, %d MiB with 10,000 kids in use (+%d MiB)", idle>>20, inUse>>20, (inUse-idle)>>20)
	first := c.useKids(t, edge, tk, kids[10_000:], 1)
	cached := c.useKids(t, edge, tk, kids[10_000:], 1)
	t.Logf("one request at a time, naming a kid for the first time: %s; the same kids cached: %s", quantiles(first), quantiles(cached))

	accept, refuse := c.timeChanges(t, owner, 100)
	t.Logf("from hdc keys rotate returning to both edges accepting the new key: %s", quantiles(accept))
	t.Logf("from hdc keys retire returning to both edges refusing the key: %s", quantiles(refuse))
	for i := range 20 {
		c.cutNotices(t)
		_, cut := c.timeChanges(t, owner, 1)
		refuse[i] = cut[0]
	}
	t.Logf("the same, each retirement just after the backends' LISTEN connections were cut: %s", quantiles(refuse[:20]))

	edge, tk = c.edges[1], c.edges[1].Login(owner, false, "")
	random := func(w, i int) (*hdctest.APIClient, hdctest.Tokens) {
		k := *owner
		k.Kid = "random-" + strconv.Itoa(w) + "-" + strconv.Itoa(i) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		return &k, tk
	}
	other := c.ops.NewClient("key-plane-scale-load")
	otherTk := edge.Login(other, false, "")
	known := func(int, int) (*hdctest.APIClient, hdctest.Tokens) { return other, otherTk }
	cpu := processCPU(t, c.ops, "hdc-edge-2")
	cpuSince := func() time.Duration { // edge 2's CPU time since the last call
		now := processCPU(t, c.ops, "hdc-edge-2")
		defer func() { cpu = now }()
		return now - cpu
	}
	control := timeCalls(t, edge, owner, tk, 10*time.Second, 0, nil)
	idleCPU := cpuSince()
	loaded := timeCalls(t, edge, owner, tk, 10*time.Second, 1000, known)
	loadedCPU := cpuSince()
	before := c.metricSum(`hdc_backend_key_lookups_total{result="unknown"}`)
	flooded := timeCalls(t, edge, owner, tk, 10*time.Second, 1000, random)
	floodCPU := cpuSince()
	t.Logf("a client's requests to edge 2 (a cached kid): %s alone (edge 2 used %v of CPU in the 10 s); %s while another client's 1,000 requests a second (a cached kid) go to edge 2 for 10 s (%v of CPU)",
		quantiles(control), idleCPU, quantiles(loaded), loadedCPU)
	t.Logf("the same client's requests: %s while 1,000 requests a second with random kids hit edge 2 for 10 s (%v of CPU), which caused %d look-ups in the backends",
		quantiles(flooded), floodCPU, c.metricSum(`hdc_backend_key_lookups_total{result="unknown"}`)-before)
}

// timeKeysAdd first adds keys until the client has about seed (with the
// real command, timing none), then times n runs of hdc keys add.
func (c *cluster) timeKeysAdd(t *testing.T, owner *hdctest.APIClient, seed, n int) []time.Duration {
	t.Helper()
	if seed > 0 {
		c.seedKeys(t, owner, seed)
	}
	var ds []time.Duration
	for range n {
		start := time.Now()
		c.ops.HDC(nil, "keys", "add", "--client", owner.ID)
		ds = append(ds, time.Since(start))
	}
	return ds
}

// seedKeys inserts n keys straight into the database, numbered as
// changes, of 100,000 other clients in owner's workspace, with a secret
// that does not open: what hdc keys add costs does not depend on the other
// rows' secrets. Then it waits until the edges have followed the n changes.
func (c *cluster) seedKeys(t *testing.T, owner *hdctest.APIClient, n int) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), c.database)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	start := time.Now()
	tx, err := conn.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var base int64
	if err := tx.QueryRow(t.Context(), `UPDATE key_plane SET seq = seq + $1 RETURNING seq - $1`, n).Scan(&base); err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("seed-%d-", time.Now().UnixNano())
	if _, err := tx.Exec(t.Context(), `INSERT INTO client_keys (kid, client_id, workspace_id, secret, enc, status, created_at, seq)
		SELECT $1 || g, $2 || (g % 100000), $3, 'hdc1.seeded', 'A128CBC-HS256', 'active', now(), $4 + g FROM generate_series(1, $5) AS g`,
		prefix, prefix+"client-", owner.Workspace, base, n); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), `VACUUM ANALYZE client_keys`); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d keys in %v", n, time.Since(start).Round(time.Millisecond))
	// The edges apply the changes in their order: once both refuse a key
	// retired after the n seeded ones, they have read those.
	c.timeChanges(t, owner, 1)
}

// importKeys stores n real keys of owner through the sealed store, as hdc
// keys import does, and returns them.
func (c *cluster) importKeys(t *testing.T, owner *hdctest.APIClient, n int) []*hdctest.APIClient {
	t.Helper()
	st := c.openSealed(t)
	defer st.Close()
	keys, events := make([]store.ClientKey, n), make([]audit.Event, n)
	out := make([]*hdctest.APIClient, n)
	for i := range n {
		k := *owner
		k.Kid, k.Key = clientkey.NewKid(), clientkey.NewSecret()
		out[i] = &k
		keys[i] = store.ClientKey{Key: clientkey.Key{Kid: k.Kid, ClientID: owner.ID, Secret: k.Key, Enc: "A128CBC-HS256", Status: clientkey.Active, CreatedAt: time.Now()}, WorkspaceID: owner.Workspace}
		events[i] = audit.Event{At: time.Now(), Action: audit.KeyAdd, Outcome: audit.Success, Workspace: owner.Workspace,
			Entity: audit.Entity{Kind: audit.EntityKey, ID: k.Kid}}
	}
	if err := st.ImportClientKeys(t.Context(), keys, events); err != nil {
		t.Fatal(err)
	}
	return out
}

// useKids makes one request with each kid through edge e, from workers
// goroutines, and returns each request's time.
func (c *cluster) useKids(t *testing.T, e *hdctest.Stack, tk hdctest.Tokens, kids []*hdctest.APIClient, workers int) []time.Duration {
	t.Helper()
	ds := make([]time.Duration, len(kids))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(kids); i = int(next.Add(1)) - 1 {
				start := time.Now()
				if got := timedStatus(t, e, kids[i], tk); got != http.StatusOK {
					t.Errorf("kid %d: %d", i, got)
					return
				}
				ds[i] = time.Since(start)
			}
		})
	}
	wg.Wait()
	return ds
}

// timeChanges rotates owner's key n times and retires the old one, timing
// from each command's return to both edges accepting the new key, and
// refusing the old. owner ends with its newest key.
func (c *cluster) timeChanges(t *testing.T, owner *hdctest.APIClient, n int) (accept, refuse []time.Duration) {
	t.Helper()
	current := *owner
	tks := [2]hdctest.Tokens{c.edges[0].Login(owner, false, ""), c.edges[1].Login(owner, false, "")}
	waitAll := func(k *hdctest.APIClient, want int) time.Duration {
		start := time.Now()
		for i, e := range c.edges {
			testkit.Eventually(t, 10*time.Second, fmt.Sprintf("edge %d to answer %d", i+1, want), func() bool { return timedStatus(t, e, k, tks[i]) == want })
		}
		return time.Since(start)
	}
	for range n {
		var k struct{ Kid, Secret string }
		c.ops.HDC(&k, "keys", "rotate", "--client", owner.ID)
		next := current
		next.Kid, next.Key = k.Kid, k.Secret
		accept = append(accept, waitAll(&next, http.StatusOK))
		c.ops.HDC(nil, "keys", "retire", "--kid", current.Kid)
		refuse = append(refuse, waitAll(&current, http.StatusBadRequest))
		current = next
	}
	owner.Kid, owner.Key = current.Kid, current.Key
	return accept, refuse
}

// cutNotices ends the backends' LISTEN connections, as a network fault
// or a database failover would: their notices stop until they listen
// again.
func (c *cluster) cutNotices(t *testing.T) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), c.database)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	const listening = `FROM pg_stat_activity WHERE query LIKE 'LISTEN hdc_client_keys%' AND pid <> pg_backend_pid()`
	testkit.Eventually(t, 10*time.Second, "both backends listening again", func() bool {
		var n int
		return conn.QueryRow(t.Context(), `SELECT count(*) `+listening).Scan(&n) == nil && n == len(c.backends)
	})
	var n int
	if err := conn.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) `+listening).Scan(&n); err != nil || n != len(c.backends) {
		t.Fatalf("cutting the LISTEN connections: %d cut, %v", n, err)
	}
}

// timeCalls times owner's requests through e for d, while flood requests
// a second, each with the kid and tokens floodWith gives for worker w's
// request i, go to e too, and returns their times.
func timeCalls(t *testing.T, e *hdctest.Stack, owner *hdctest.APIClient, tk hdctest.Tokens, d time.Duration, flood int, floodWith func(w, i int) (*hdctest.APIClient, hdctest.Tokens)) []time.Duration {
	t.Helper()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent atomic.Int64
	if flood > 0 {
		for w := range 16 {
			wg.Go(func() {
				tick := time.NewTicker(time.Duration(16 * int(time.Second) / flood))
				defer tick.Stop()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					case <-tick.C:
					}
					k, ktk := floodWith(w, i)
					timedStatus(t, e, k, ktk)
					sent.Add(1)
				}
			})
		}
	}
	var ds []time.Duration
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		start := time.Now()
		if got := timedStatus(t, e, owner, tk); got != http.StatusOK {
			t.Fatalf("the client's request: %d", got)
		}
		ds = append(ds, time.Since(start))
	}
	close(stop)
	wg.Wait()
	if flood > 0 {
		t.Logf("%d other requests in %v", sent.Load(), d)
	}
	return ds
}

// edgeRSS returns the resident memory of the process named name.
func edgeRSS(t *testing.T, s *hdctest.Stack, name string) int64 {
	t.Helper()
	for _, line := range strings.Split(procFile(t, s, name, "status"), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS for %s", name)
	return 0
}

// processCPU returns the CPU time (user and system) the process named name
// has used.
func processCPU(t *testing.T, s *hdctest.Stack, name string) time.Duration {
	t.Helper()
	stat := procFile(t, s, name, "stat")
	// The fields after the command's name, which ends with ')': utime and
	// stime are the 12th and 13th, in clock ticks (100 a second).
	f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// procFile returns the file of /proc/<pid>/ of s's process named name.
func procFile(t *testing.T, s *hdctest.Stack, name, file string) string {
	t.Helper()
	for _, p := range s.Procs {
		if p.Name == name {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", p.Cmd.Process.Pid, file))
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	t.Fatalf("no process %s", name)
	return ""
}

// timing is the client of the measurements. Unlike a stack's, it does not
// check the answers against the API document: that work, on the same two
// cores, would count as the edge's. It keeps a connection per worker.
var timing = &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// timedStatus is kidStatus through timing: the status of a request to e
// naming k's kid, 0 when it gets no answer.
func timedStatus(t *testing.T, e *hdctest.Stack, k *hdctest.APIClient, tk hdctest.Tokens) int {
	req, err := http.NewRequest(http.MethodGet, e.Edge+hdctest.SubsPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tk.AccessToken)
	req.Header.Set(hdctest.JWEHeader, "JWE")
	req.Header.Set(hdctest.JWEKidHeader, k.Kid)
	resp, err := timing.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
