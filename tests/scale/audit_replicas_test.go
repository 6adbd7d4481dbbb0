package scale

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// auditLoadRounds is how many rounds each worker of auditLoad runs; a
// round is four audited requests.
const auditLoadRounds = 5

// TestAuditChainTwoReplicas proves that each workspace's hash-chained audit
// trail stays whole when two hdc-backend processes on one PostgreSQL
// database append to it at once. Clients of two workspaces log in, upload
// and retrieve through both edges (each in front of both backends) from
// many goroutines together. Afterwards the real `hdc audit verify` passes;
// the real `hdc audit list` shows each trail numbered 1..n with no gap or
// repeat, every link and hash right, exactly one record per request that
// succeeded, holding that request's id, action, outcome, client and
// entity, nothing of the other workspace, and records of both replicas
// interleaved; each request is in one replica's log. Finally
// a record altered in the database makes `hdc audit verify` fail at the
// record after it.
func TestAuditChainTwoReplicas(t *testing.T) {
	t.Parallel() // it times nothing: it runs beside the others that time nothing, after those that do
	// Every refusal its own record, so that each request's is found: the
	// windows of repeated refusals have a test of their own.
	c := startCluster(t, "HDC_AUDIT_REFUSAL_WINDOW=0")
	var clients []*hdctest.APIClient
	for _, ws := range []string{"audit-replicas-a", "audit-replicas-b"} {
		clients = append(clients, c.ops.NewClient(ws), c.ops.NewClient(ws))
	}
	workspaces := []string{clients[0].Workspace, clients[2].Workspace}
	calls := auditLoad(t, c, clients)
	attributeReplicas(t, c, calls)
	byRequest := map[string]auditedCall{}
	counts := map[string]int{}
	for _, call := range calls {
		byRequest[call.request] = call
		counts[fmt.Sprintf("%s/%s/edge %d", call.action, call.outcome, call.edge+1)]++
	}
	t.Logf("%d audited requests answered as expected: %v", len(calls), counts)

	out, _, err := c.ops.HDCRun("audit", "verify")
	if err != nil {
		t.Fatalf("hdc audit verify after the load: %v\n%s", err, out)
	}
	verified := hdctest.VerifiedChains(t, out)
	var trails [][]hdctest.ListedRecord
	for _, ws := range workspaces {
		trail := c.ops.ListAudit(ws)
		checkListedChain(t, ws, trail)
		if v := verified[ws]; v.Status != "ok" || v.First != 1 || v.Last != int64(len(trail)) {
			t.Errorf("hdc audit verify says %+v of %s, whose list has %d records", v, ws, len(trail))
		}
		checkTrailMatchesLoad(t, ws, trail, calls, byRequest)
		checkInterleaved(t, ws, trail, byRequest)
		trails = append(trails, trail)
	}
	if t.Failed() {
		t.FailNow()
	}
	checkTamperCaught(t, c, trails[0], workspaces[1])
}

// auditedCall is a request of the load that was answered as expected, and
// so the record it must have left in its workspace's trail.
type auditedCall struct {
	edge    int // the edge that answered
	backend int // the backend that served it (attributeReplicas)
	client  *hdctest.APIClient
	action  audit.Action
	outcome audit.Outcome
	entity  string // the care context concerned; "" for a login
	request string // the X-Request-Id of the answer
}

// auditLoad runs a worker for every client and edge, all released at once,
// and returns the calls that were answered as expected. An unexpected
// answer fails the test and ends its worker.
func auditLoad(t *testing.T, c *cluster, clients []*hdctest.APIClient) []auditedCall {
	var (
		mu    sync.Mutex
		calls []auditedCall
		wg    sync.WaitGroup
	)
	start := make(chan struct{})
	for _, cl := range clients {
		for i := range c.edges {
			wg.Go(func() {
				<-start
				for n := range auditLoadRounds {
					got, err := auditRound(c, i, cl, n)
					mu.Lock()
					calls = append(calls, got...)
					mu.Unlock()
					if err != nil {
						t.Errorf("client %s through edge %d, round %d: %v", cl.ID, i+1, n, err)
						return
					}
				}
			})
		}
	}
	close(start)
	wg.Wait()
	return calls
}

// auditRound logs cl in through edge i, uploads a file there, retrieves it
// through the other edge and asks edge i for a record that does not exist
// (a denied retrieval). It returns the calls answered as expected.
func auditRound(c *cluster, i int, cl *hdctest.APIClient, n int) ([]auditedCall, error) {
	var calls []auditedCall
	r, call, err := auditedRequest(c, i, cl, audit.Login, http.StatusOK, "POST", hdctest.LoginPath, hdctest.LoginBody(cl), nil)
	if err != nil {
		return calls, err
	}
	var tk hdctest.Tokens
	if err := json.Unmarshal(r.Body, &tk); err != nil || tk.AccessToken == "" {
		return calls, fmt.Errorf("login answered %s", r)
	}
	calls = append(calls, call)

	body, ctype := hdctest.MultipartUpload(fmt.Appendf(nil, "consultation of %s, edge %d, round %d", cl.ID, i+1, n))
	h := hdctest.Bearer(tk)
	h["Content-Type"] = ctype
	r, call, err = auditedRequest(c, i, cl, audit.RecordUpload, http.StatusOK, "POST", hdctest.UploadPath, body, h)
	if err != nil {
		return calls, err
	}
	var rec struct {
		CareContextID string `json:"care_context_id"`
	}
	if err := json.Unmarshal(r.Body, &rec); err != nil || !contract.IsUUID(rec.CareContextID) {
		return calls, fmt.Errorf("upload answered %s", r)
	}
	call.entity = rec.CareContextID
	calls = append(calls, call)

	for _, q := range []struct {
		edge   int
		id     string
		status int
	}{{1 - i, rec.CareContextID, http.StatusOK}, {i, uuid.NewString(), http.StatusNotFound}} {
		_, call, err = auditedRequest(c, q.edge, cl, audit.RecordRetrieve, q.status,
			"GET", hdctest.RetrievePath+"?identifier="+url.QueryEscape(q.id), nil, hdctest.Bearer(tk))
		if err != nil {
			return calls, err
		}
		call.entity = q.id
		calls = append(calls, call)
	}
	return calls, nil
}

// auditedRequest sends a request of cl through edge i with stack.request,
// which returns its failures, so that it can run off the test's goroutine.
// It returns the answer and the call, audited as action, succeeding when
// want is 200 and denied otherwise; an answer other than want, or without
// a request id, is an error.
func auditedRequest(c *cluster, i int, cl *hdctest.APIClient, action audit.Action, want int,
	method, path string, body []byte, header map[string]string) (*hdctest.Response, auditedCall, error) {
	call := auditedCall{edge: i, client: cl, action: action, outcome: audit.Success}
	if want != http.StatusOK {
		call.outcome = audit.Denied
	}
	r, err := c.ops.Request(c.edges[i].Edge, method, path, body, hdctest.WithBodyType(header, body))
	if err != nil {
		return nil, call, err
	}
	call.request = r.Header.Get(contract.HeaderRequestIDAnswer)
	if r.Status != want || !contract.IsUUID(call.request) {
		return r, call, fmt.Errorf("%s %s through edge %d: %s (request id %q), want %d", method, path, i+1, r, call.request, want)
	}
	return r, call, nil
}

// checkListedChain checks, independently of hdc audit verify, that trail
// is a whole chain: seqs 1..n, the first record following nothing, each
// other one the hash of the record before it (listAudit checked each
// hash).
func checkListedChain(t *testing.T, ws string, trail []hdctest.ListedRecord) {
	t.Helper()
	prev := strings.Repeat("0", 2*sha256.Size)
	for i, r := range trail {
		switch {
		case r.Seq != int64(i+1):
			t.Fatalf("record %d of %s's trail has seq %d", i+1, ws, r.Seq)
		case r.Prev != prev:
			t.Fatalf("record %d of %s's trail follows %s, not the record before it (%s)", r.Seq, ws, r.Prev, prev)
		}
		prev = r.Hash
	}
}

// checkTrailMatchesLoad checks that the trail of ws holds one record, in
// ws and matching it, for each call of the load in ws, and nothing else
// but the records of the operator's `hdc clients create` and `hdc keys
// add` for each of its clients.
func checkTrailMatchesLoad(t *testing.T, ws string, trail []hdctest.ListedRecord, calls []auditedCall, byRequest map[string]auditedCall) {
	t.Helper()
	seen := map[string]int{}
	operator := map[audit.Action]int{}
	clients := map[string]bool{}
	for _, r := range trail {
		call, ok := byRequest[r.Request]
		switch {
		case r.Workspace != ws:
			t.Errorf("the trail of %s holds a record of %q: %s", ws, r.Workspace, r.Line)
		case r.Request == "" && (r.Action == audit.ClientCreate || r.Action == audit.KeyAdd):
			operator[r.Action]++
		case !ok:
			t.Errorf("the trail of %s holds a record of no request the load saw succeed: %s", ws, r.Line)
		case call.client.Workspace != ws || r.Client != call.client.ID || r.Action != call.action ||
			r.Outcome != call.outcome || r.Entity.ID != call.entity:
			t.Errorf("record %s does not match its request %+v", r.Line, call)
		default:
			seen[r.Request]++
		}
	}
	want := 0
	for _, call := range calls {
		if call.client.Workspace != ws {
			continue
		}
		want++
		clients[call.client.ID] = true
		if n := seen[call.request]; n != 1 {
			t.Errorf("the %s of request %s (edge %d) is %d times in the trail of %s", call.action, call.request, call.edge+1, n, ws)
		}
	}
	if operator[audit.ClientCreate] != len(clients) || operator[audit.KeyAdd] != len(clients) {
		t.Errorf("the trail of %s holds operator records %v, want one client_create and one key_add for each of its %d clients", ws, operator, len(clients))
	}
	if got := len(trail) - operator[audit.ClientCreate] - operator[audit.KeyAdd]; got != want {
		t.Errorf("the trail of %s holds %d client records, for %d requests that succeeded", ws, got, want)
	}
}

// checkInterleaved checks that the client records of trail come from both
// replicas and alternate between them, as appends at once would.
func checkInterleaved(t *testing.T, ws string, trail []hdctest.ListedRecord, byRequest map[string]auditedCall) {
	t.Helper()
	var perReplica [2]int
	runs, last := 0, -1
	for _, r := range trail {
		call, ok := byRequest[r.Request]
		if !ok {
			continue
		}
		perReplica[call.backend]++
		if call.backend != last {
			runs++
			last = call.backend
		}
	}
	if perReplica[0] == 0 || perReplica[1] == 0 || runs < 4 {
		t.Errorf("the trail of %s holds %d records of backend 1 and %d of backend 2 in %d runs: the replicas did not append at once",
			ws, perReplica[0], perReplica[1], runs)
	}
	t.Logf("trail of %s: %d records, %d appended by backend 1 and %d by backend 2, alternating in %d runs",
		ws, len(trail), perReplica[0], perReplica[1], runs)
}

// attributeReplicas sets the backend of each call: the one whose log
// holds its request, which must be in exactly one backend's log.
func attributeReplicas(t *testing.T, c *cluster, calls []auditedCall) {
	t.Helper()
	var logs [2]string
	for i, b := range c.backends {
		logs[i] = b.proc.Out.String()
	}
	for i := range calls {
		in := [2]bool{strings.Contains(logs[0], calls[i].request), strings.Contains(logs[1], calls[i].request)}
		if in[0] == in[1] {
			t.Errorf("request %s answered by edge %d is in %v of the backends' logs, want one", calls[i].request, calls[i].edge+1, in)
		}
		if in[1] {
			calls[i].backend = 1
		}
	}
}

// checkTamperCaught alters a record in the middle of trail in the database,
// behind the backends' back, and requires hdc audit verify to fail at the
// record after it, the trail of workspace other still verifying; with the
// record restored, verify passes again.
func checkTamperCaught(t *testing.T, c *cluster, trail []hdctest.ListedRecord, other string) {
	t.Helper()
	i := len(trail) / 2
	for i < len(trail)-1 && trail[i].Request == "" {
		i++
	}
	victim := trail[i]
	if victim.Request == "" || i == len(trail)-1 {
		t.Fatalf("no client record to alter in the middle of the trail of %s", victim.Workspace)
	}
	conn, err := pgx.Connect(t.Context(), c.database)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var body []byte
	if err := conn.QueryRow(t.Context(), `SELECT body FROM audit_records WHERE workspace_id = $1 AND seq = $2`,
		victim.Workspace, victim.Seq).Scan(&body); err != nil {
		t.Fatal(err)
	}
	forged := bytes.Replace(body, []byte(victim.Request), []byte(uuid.NewString()), 1)
	setAuditBody(t, conn, victim, forged)
	out, _, err := c.ops.HDCRun("audit", "verify")
	want := fmt.Sprintf("record %d", victim.Seq+1)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), victim.Workspace) {
		t.Fatalf("hdc audit verify with record %d of %s altered: %v, want a failure naming %s", victim.Seq, victim.Workspace, err, want)
	}
	chains := hdctest.VerifiedChains(t, out)
	if v := chains[victim.Workspace]; v.Status != "broken" || v.Seq != victim.Seq+1 {
		t.Errorf("hdc audit verify says %+v of the altered trail, want broken at %d", v, victim.Seq+1)
	}
	if v := chains[other]; v.Status != "ok" {
		t.Errorf("hdc audit verify says %+v of the trail nobody altered", v)
	}
	t.Logf("record %d of %s altered in the database: %v", victim.Seq, victim.Workspace, err)
	setAuditBody(t, conn, victim, body)
	if out, _, err := c.ops.HDCRun("audit", "verify"); err != nil {
		t.Fatalf("hdc audit verify with the record restored: %v\n%s", err, out)
	}
}

// setAuditBody replaces the stored canonical form of record r.
func setAuditBody(t *testing.T, conn *pgx.Conn, r hdctest.ListedRecord, body []byte) {
	t.Helper()
	tag, err := conn.Exec(t.Context(), `UPDATE audit_records SET body = $1 WHERE workspace_id = $2 AND seq = $3`,
		body, r.Workspace, r.Seq)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("updating record %d of %s: %v, %d rows", r.Seq, r.Workspace, err, tag.RowsAffected())
	}
}
