package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// listedEdge and listedBackend are the members of hdc fleet's lines that
// these tests read, as an operator reads them.
type listedEdge struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	AppliedSeq  int64     `json:"applied_seq"`
	LastContact time.Time `json:"last_contact"`
	LeavesAt    time.Time `json:"leaves_at"`
}

type listedBackend struct {
	ID       string    `json:"id"`
	Address  string    `json:"address"`
	Current  bool      `json:"current"`
	LastSeen time.Time `json:"last_seen"`
	LeavesAt time.Time `json:"leaves_at"`
}

// fleetEdges and fleetBackends are hdc fleet edges and hdc fleet backends
// through the Admin API, as op.
func fleetEdges(op *hdctest.Stack) []listedEdge {
	var es []listedEdge
	op.HDC(&es, "fleet", "edges")
	return es
}

func fleetBackends(op *hdctest.Stack) []listedBackend {
	var bs []listedBackend
	op.HDC(&bs, "fleet", "backends")
	return bs
}

// edgeNamed returns the edge of es whose certificate is name.
func edgeNamed(es []listedEdge, name string) (listedEdge, bool) {
	for _, e := range es {
		if e.Name == name {
			return e, true
		}
	}
	return listedEdge{}, false
}

// reporter posts edge reports to s's backend with the edge certificate
// name, issued here, as an edge (or someone holding an edge's files)
// would.
type reporter struct {
	t    *testing.T
	s    *hdctest.Stack
	http *http.Client
}

func newReporter(t *testing.T, s *hdctest.Stack, name string) *reporter {
	t.Helper()
	s.HDC(nil, "tls", "issue", "--role", string(pki.Edge), "--name", name, "--dir", s.Hop)
	s.Creds.NotePEMFile(t, "a private key of the hop", filepath.Join(s.Hop, name+"-key.pem"))
	cfg, err := pki.ClientTLS(filepath.Join(s.Hop, name+".pem"), filepath.Join(s.Hop, name+"-key.pem"), filepath.Join(s.Hop, pki.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	return &reporter{t: t, s: s, http: &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: cfg}}}
}

// post sends r and returns the answer's status, header and body.
func (rp *reporter) post(r contract.EdgeReport) (int, http.Header, []byte) {
	rp.t.Helper()
	body, err := json.Marshal(r)
	if err != nil {
		rp.t.Fatal(err)
	}
	resp, err := rp.http.Post(rp.s.Internal+contract.PathEdgeReport, "application/json", bytes.NewReader(body))
	if err != nil {
		rp.t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, answer
}

// TestEdgeReportsUnderItsCertificate (fifth review, finding 4): an edge
// reports only under its certificate's name. A report naming the instance
// of an edge of another certificate is refused (403 forbidden) and
// changes nothing: neither that edge's row nor a key's last use. Instances
// invented under one certificate, from one address, replace each other:
// the fleet keeps one row for them, not one each. A report's uses stay
// bounded: more kids than a report may carry are refused, a use later
// than the backend's clock counts as now, and a kid of no key makes
// nothing.
func TestEdgeReportsUnderItsCertificate(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	op := s.Person(pki.Operator, "alice@example.org")
	c := s.NewClient("fleet-bound")
	var stackEdge listedEdge
	testkit.Eventually(t, time.Minute, "the stack's edge's first report", func() bool {
		var ok bool
		stackEdge, ok = edgeNamed(fleetEdges(op), "hdc-edge")
		return ok
	})

	other := newReporter(t, s, "edge-2")
	status, header, body := other.post(contract.EdgeReport{Instance: stackEdge.ID, AppliedSeq: 0,
		Uses: []contract.KidUse{{Kid: c.Kid, LastUsed: time.Now()}}})
	testkit.WantProblem(t, status, header, body, http.StatusForbidden, problem.CodeForbidden)
	edges := fleetEdges(op)
	if e, ok := edgeNamed(edges, "hdc-edge"); !ok || e.ID != stackEdge.ID || len(edges) != 1 {
		t.Fatalf("after edge-2 reported as the stack's edge, the fleet's edges are %+v", edges)
	}
	st := s.OpenStore()
	if used := lastUse(t, st, c.Kid); !used.IsZero() {
		t.Fatalf("a refused report set the key's last use to %v", used)
	}

	var last string
	for range 20 {
		last = uuid.NewString()
		if status, _, body := other.post(contract.EdgeReport{Instance: last, AppliedSeq: 1}); status != http.StatusNoContent {
			t.Fatalf("a report of edge-2: %d %s", status, body)
		}
	}
	edges = fleetEdges(op)
	if e, ok := edgeNamed(edges, "edge-2"); !ok || e.ID != last || len(edges) != 2 {
		t.Fatalf("after 20 instances reported under edge-2's certificate, the fleet's edges are %+v; want the stack's edge and edge-2's last instance %s", edges, last)
	}

	tooMany := make([]contract.KidUse, contract.MaxEdgeReportUses+1)
	for i := range tooMany {
		tooMany[i] = contract.KidUse{Kid: fmt.Sprint("k-", i), LastUsed: time.Now()}
	}
	status, header, body = other.post(contract.EdgeReport{Instance: last, Uses: tooMany})
	testkit.WantProblem(t, status, header, body, http.StatusBadRequest, problem.CodeInvalidRequest)
	before := time.Now()
	if status, _, body := other.post(contract.EdgeReport{Instance: last, Uses: []contract.KidUse{
		{Kid: c.Kid, LastUsed: time.Now().Add(time.Hour)}, {Kid: "k-none", LastUsed: time.Now()}}}); status != http.StatusNoContent {
		t.Fatalf("a report of a use an hour ahead: %d %s", status, body)
	}
	if used := lastUse(t, st, c.Kid); used.Before(before) || used.After(time.Now()) {
		t.Fatalf("a use reported an hour ahead set the key's last use to %v, want the backend's now, within [%v, now]", used, before)
	}
	if _, err := st.ClientKey(t.Context(), "k-none"); err == nil {
		t.Fatal("a report of a kid of no key made a key")
	}
}

// TestFleetForgetsSilentInstances (fifth review, finding 4): a backend
// killed and started again at the same address replaces its row, at
// once; an edge instance silent for HDC_FLEET_FORGET_AFTER leaves the
// fleet's view, and until then the view says when (leaves_at).
func TestFleetForgetsSilentInstances(t *testing.T) {
	t.Parallel()
	const forgetAfter = 15 * time.Second
	s := hdctest.StartStack(t, fmt.Sprint("HDC_FLEET_FORGET_AFTER=", forgetAfter))
	op := s.Person(pki.Operator, "alice@example.org")
	var killed listedBackend
	testkit.Eventually(t, time.Minute, "the backend's heartbeat", func() bool {
		bs := fleetBackends(op)
		if len(bs) == 1 {
			killed = bs[0]
		}
		return len(bs) == 1
	})
	s.KillBackend()
	var bs []listedBackend
	testkit.Eventually(t, time.Minute, "the new backend's heartbeat", func() bool {
		bs = fleetBackends(op)
		return slices.ContainsFunc(bs, func(b listedBackend) bool { return b.ID != killed.ID })
	})
	if len(bs) != 1 || bs[0].ID == killed.ID || bs[0].Address != killed.Address || !bs[0].Current {
		t.Fatalf("after the backend at %s was killed and started again, the fleet's backends are %+v; want the new one alone", killed.Address, bs)
	}

	gone := uuid.NewString()
	if status, _, body := newReporter(t, s, "edge-gone").post(contract.EdgeReport{Instance: gone}); status != http.StatusNoContent {
		t.Fatalf("a report: %d %s", status, body)
	}
	e, ok := edgeNamed(fleetEdges(op), "edge-gone")
	if !ok || e.ID != gone || !e.LeavesAt.Equal(e.LastContact.Add(forgetAfter)) {
		t.Fatalf("the reported edge: %+v (listed %v); want it to leave the view %v after its last contact", e, ok, forgetAfter)
	}
	for _, path := range []string{"/fleet/backends", "/fleet/edges"} { // the lists as docs/admin-openapi.yaml has them
		if a := adminGet(t, op, path); a.Status != http.StatusOK || !bytes.Contains(a.Body, []byte(`"leaves_at":`)) {
			t.Errorf("GET %s: %d %.300s", path, a.Status, a.Body)
		}
	}
	testkit.Eventually(t, forgetAfter+time.Minute, "the silent edge to leave the view", func() bool {
		_, listed := edgeNamed(fleetEdges(op), "edge-gone")
		return !listed
	})
	if left := time.Since(e.LastContact); left < forgetAfter {
		t.Fatalf("the silent edge left the view %v after its last contact, before %v", left, forgetAfter)
	}
	if _, ok := edgeNamed(fleetEdges(op), "hdc-edge"); !ok {
		t.Fatal("the stack's edge, which reports, left the view too")
	}
}
