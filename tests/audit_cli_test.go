package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/fhir"
)

// listedRecord is a line of hdc audit list: a record's canonical form with
// its hash added as the last member.
type listedRecord struct {
	Workspace string        `json:"workspace"`
	Seq       int64         `json:"seq"`
	Prev      string        `json:"prev"`
	Action    audit.Action  `json:"action"`
	Outcome   audit.Outcome `json:"outcome"`
	Client    string        `json:"client"`
	Entity    struct {
		ID string `json:"id"`
	} `json:"entity"`
	Request string `json:"request"`
	Hash    string `json:"hash"`
	line    string
	// canonical is the line without its hash: the record's canonical form.
	canonical string
}

// listAudit returns the trail of workspace ws as `hdc audit list
// --workspace` prints it, having checked that each line's hash is its
// link: the SHA-256 of its canonical form for a record of format 1, and
// for a keyed one (format 2, an HMAC under a key the test does not hold)
// the prev of the record after it.
func (s *stack) listAudit(ws string) []listedRecord {
	s.t.Helper()
	out, _, err := s.hdcRun("audit", "list", "--workspace", ws)
	if err != nil {
		s.t.Fatal(err)
	}
	var trail []listedRecord
	for line := range strings.Lines(out) {
		r := listedRecord{line: strings.TrimSuffix(line, "\n")}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			s.t.Fatalf("hdc audit list printed %q: %v", line, err)
		}
		canonical, ok := strings.CutSuffix(r.line, `,"hash":"`+r.Hash+`"}`)
		r.canonical = canonical + "}"
		keyed := strings.HasPrefix(r.canonical, `{"v":2,`)
		if sum := sha256.Sum256([]byte(r.canonical)); !ok || !keyed && hex.EncodeToString(sum[:]) != r.Hash {
			s.t.Fatalf("record %d of %q is listed with a hash that is not its own: %s", r.Seq, ws, r.line)
		}
		if n := len(trail); n > 0 && trail[n-1].Seq == r.Seq-1 && trail[n-1].Hash != r.Prev {
			s.t.Fatalf("record %d of %q is listed with a hash that is not its successor's prev", trail[n-1].Seq, ws)
		}
		trail = append(trail, r)
	}
	return trail
}

// verifiedChain is a line of hdc audit verify.
type verifiedChain struct {
	Workspace   string
	First, Last int64
	Status      string
	Seq         int64
	Reason      string
}

// verifiedChains reads the output of hdc audit verify, by workspace.
func verifiedChains(t *testing.T, out string) map[string]verifiedChain {
	t.Helper()
	chains := map[string]verifiedChain{}
	for line := range strings.Lines(out) {
		var v verifiedChain
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("hdc audit verify printed %q", line)
		}
		chains[v.Workspace] = v
	}
	return chains
}

// checkAuditExport checks that `hdc audit export --workspace ws` prints
// one AuditEvent per record of the trail, in order, each passing the FHIR
// validators the route's Bundles pass (put in a searchset Bundle for
// them, as the bulk format's lines are resources on their own).
func (s *stack) checkAuditExport(t *testing.T, ws string) {
	t.Helper()
	out, _, err := s.hdcRun("audit", "export", "--workspace", ws)
	if err != nil {
		t.Fatal(err)
	}
	listed := s.listAudit(ws)
	var entries []map[string]any
	for line := range strings.Lines(out) {
		var ev struct{ ResourceType, ID string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("hdc audit export printed %q: %v", line, err)
		}
		if i := len(entries); i >= len(listed) || ev.ResourceType != "AuditEvent" || ev.ID != fhir.AuditEventID(ws, listed[i].Seq) {
			t.Fatalf("line %d of hdc audit export is %s, want the AuditEvent of record %d of %d", i+1, line, i+1, len(listed))
		}
		entries = append(entries, map[string]any{"fullUrl": "urn:uuid:" + ev.ID, "resource": json.RawMessage(line),
			"search": map[string]string{"mode": "match"}})
	}
	if len(entries) != len(listed) {
		t.Fatalf("hdc audit export printed %d AuditEvents, the trail of %q has %d records", len(entries), ws, len(listed))
	}
	bundle, err := json.Marshal(map[string]any{"resourceType": "Bundle", "type": "searchset",
		"link": []map[string]string{{"relation": "self", "url": "urn:hdc:audit-export"}}, "entry": entries})
	if err != nil {
		t.Fatal(err)
	}
	checkAuditBundle(t, &response{status: 200, body: bundle})
}
