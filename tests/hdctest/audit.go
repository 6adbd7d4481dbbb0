package hdctest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	_ "modernc.org/sqlite" // the driver the backend's SQLite store uses

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/fhirview"
	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/pki"
)

// ListedRecord is a line of hdc audit list: a record's canonical form with
// its hash added as the last member.
type ListedRecord struct {
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
	Line    string
	// canonical is the line without its hash: the record's canonical form.
	canonical string
}

// ListAudit returns the trail of workspace ws as `hdc audit list
// --workspace` prints it, having checked that each line's hash is its
// link: the SHA-256 of its canonical form for a record of format 1, and
// for a keyed one (format 2, an HMAC under a key the test does not hold)
// the prev of the record after it.
func (s *Stack) ListAudit(ws string) []ListedRecord {
	s.T.Helper()
	out, _, err := s.HDCRun("audit", "list", "--workspace", ws)
	if err != nil {
		s.T.Fatal(err)
	}
	var trail []ListedRecord
	for line := range strings.Lines(out) {
		r := ListedRecord{Line: strings.TrimSuffix(line, "\n")}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			s.T.Fatalf("hdc audit list printed %q: %v", line, err)
		}
		canonical, ok := strings.CutSuffix(r.Line, `,"hash":"`+r.Hash+`"}`)
		r.canonical = canonical + "}"
		keyed := strings.HasPrefix(r.canonical, `{"v":2,`)
		if sum := sha256.Sum256([]byte(r.canonical)); !ok || !keyed && hex.EncodeToString(sum[:]) != r.Hash {
			s.T.Fatalf("record %d of %q is listed with a hash that is not its own: %s", r.Seq, ws, r.Line)
		}
		if n := len(trail); n > 0 && trail[n-1].Seq == r.Seq-1 && trail[n-1].Hash != r.Prev {
			s.T.Fatalf("record %d of %q is listed with a hash that is not its successor's prev", trail[n-1].Seq, ws)
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

// VerifiedChains reads the output of hdc audit verify, by workspace.
func VerifiedChains(t *testing.T, out string) map[string]verifiedChain {
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

// CheckAuditExport checks that `hdc audit export --workspace ws` prints
// one AuditEvent per record of the trail, in order, each passing the FHIR
// validators the route's Bundles pass (put in a searchset Bundle for
// them, as the bulk format's lines are resources on their own).
func (s *Stack) CheckAuditExport(t *testing.T, ws string) {
	t.Helper()
	out, _, err := s.HDCRun("audit", "export", "--workspace", ws)
	if err != nil {
		t.Fatal(err)
	}
	listed := s.ListAudit(ws)
	var entries []map[string]any
	for line := range strings.Lines(out) {
		var ev struct{ ResourceType, ID string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("hdc audit export printed %q: %v", line, err)
		}
		if i := len(entries); i >= len(listed) || ev.ResourceType != "AuditEvent" || ev.ID != fhirview.AuditEventID(ws, listed[i].Seq) {
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
	CheckAuditBundle(t, &Response{Status: 200, Body: bundle})
}

// CheckAuditBundle checks an AuditEvent search answer: 200 and a searchset
// Bundle that the official FHIR R4 JSON schema, npm fhir and fhirpath
// accept (tests/interop/auditevent.mjs). It returns the Bundle.
func CheckAuditBundle(t testing.TB, r *Response) map[string]any {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("AuditEvent search: %s", r)
	}
	if out, err := Node(t, r.Body, "auditevent.mjs"); err != nil {
		t.Fatalf("the AuditEvent Bundle fails the FHIR validators: %v\n%s\n%s", err, out, r)
	}
	b := r.JSON(t)
	if b["resourceType"] != "Bundle" || b["type"] != "searchset" {
		t.Fatalf("not a searchset Bundle: %s", r)
	}
	return b
}

// OpenStore opens the stack's backend's store (SQLite, in its data
// directory), to read it as the backend does while it runs; it is closed
// at the test's end.
func (s *Stack) OpenStore() store.Store {
	s.T.Helper()
	st := s.openStore()
	s.T.Cleanup(func() { st.Close() })
	return st
}

// openStore opens the stack's backend's store; the caller closes it.
func (s *Stack) openStore() store.Store {
	s.T.Helper()
	st, err := storage.OpenExistingStore(context.Background(), "", filepath.Join(s.Dir, "backend"))
	if err != nil {
		s.T.Fatal(err)
	}
	return st
}

// StoredAudit returns the trail of workspace as the backend's store reads
// it.
func (s *Stack) StoredAudit(workspace string) []audit.Record {
	s.T.Helper()
	st := s.openStore()
	defer st.Close()
	rs, err := st.ListAudit(context.Background(), store.AuditFilter{Workspace: workspace})
	if err != nil {
		s.T.Fatalf("the trail of %q: %v", workspace, err)
	}
	return rs
}

// AuditTrail returns the trail of workspace from the backend's store,
// checking that `hdc audit list --workspace` prints exactly those records.
func (s *Stack) AuditTrail(workspace string) []audit.Record {
	s.T.Helper()
	stored, listed := s.StoredAudit(workspace), s.ListAudit(workspace)
	if len(listed) != len(stored) {
		s.T.Fatalf("hdc audit list --workspace %q printed %d records, the store holds %d", workspace, len(listed), len(stored))
	}
	for i, l := range listed {
		if want := string(stored[i].Canonical()); l.canonical != want {
			s.T.Errorf("hdc audit list printed\n%s\nfor the stored record\n%s", l.Line, want)
		}
	}
	return stored
}

// AuditSummary is a trail as a failure shows it.
func AuditSummary(trail []audit.Record) string {
	var b strings.Builder
	for _, r := range trail {
		fmt.Fprintf(&b, "  %d %s %s %s:%s request %q\n", r.Seq, r.Action, r.Outcome, r.Entity.Kind, r.Entity.ID, r.Request)
	}
	return b.String()
}

// VerifyAudit runs `hdc audit verify` with args and checks its verdict:
// every trail "ok" when broken is nil, else a failure naming broken's
// workspace, seq and reason, with that trail's line "broken" at the seq.
func (s *Stack) VerifyAudit(t *testing.T, args []string, broken *audit.Break) {
	t.Helper()
	out, stderr, err := s.HDCRun(append([]string{"audit", "verify"}, args...)...)
	if broken == nil && err != nil {
		t.Fatalf("an untouched trail fails: %v", err)
	}
	if broken != nil {
		want := fmt.Sprintf("hdc: the audit trail of workspace %q breaks at record %d: %s", broken.Workspace, broken.Seq, broken.Reason)
		if err == nil || !strings.Contains(stderr, want) {
			t.Fatalf("hdc audit verify: %v, want it to fail with %q", err, want)
		}
	}
	for ws, v := range VerifiedChains(t, out) {
		want := "ok"
		if broken != nil && ws == broken.Workspace {
			want = "broken"
		}
		if v.Status != want || (want == "broken" && v.Seq != broken.Seq) {
			t.Errorf("hdc audit verify: %+v, want status %s", v, want)
		}
	}
	if out == "" {
		t.Error("hdc audit verify printed no trail")
	}
}

// RequestID returns the request id the edge answered r with.
func RequestID(t *testing.T, r *Response) string {
	t.Helper()
	id := r.Header.Get("X-Request-Id")
	if id == "" {
		t.Fatalf("no X-Request-Id on %s", r)
	}
	return id
}

// Refresh rotates old's refresh token through the edge as c.
func (s *Stack) Refresh(c *APIClient, old Tokens) *Response {
	s.T.Helper()
	b, _ := json.Marshal(map[string]string{"refresh_token": old.RefreshToken, "access_token": old.AccessToken})
	h := Bearer(old)
	h["Client-Id"] = c.ID
	return s.Send(c, false, "POST", RefreshPath, b, h)
}

// FailLogin logs in as clientID with a wrong secret and returns the
// refusal's request id.
func (s *Stack) FailLogin(t *testing.T, c *APIClient, clientID string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"client_id": clientID, "client_secret": "not-the-secret-of-anyone"})
	r := s.Send(c, false, "POST", LoginPath, b, nil)
	ExpectProblem(t, r, 401, "invalid_client")
	return RequestID(t, r)
}

// ParserResults is what a parser submits for a record: a FHIR Bundle.
const ParserResults = `{"resourceType":"Bundle","type":"collection","entry":[
	{"fullUrl":"urn:uuid:patient","resource":{"resourceType":"Patient","id":"pt","name":[{"text":"Asha Rao"}]}},
	{"resource":{"resourceType":"Condition","code":{"text":"Fever"},"subject":{"reference":"urn:uuid:patient"}}}]}`

// SubmitResources posts parserResults for record cc on the backend's
// internal listener, as a parser does, under a request id of its own,
// which it returns.
func (s *Stack) SubmitResources(cc string) string {
	s.T.Helper()
	req, err := http.NewRequest("POST", s.Internal+"/internal/v1/records/"+url.PathEscape(cc)+"/resources",
		strings.NewReader(ParserResults))
	if err != nil {
		s.T.Fatal(err)
	}
	id := uuid.NewString()
	req.Header.Set("Content-Type", "application/fhir+json")
	req.Header.Set("X-Hdc-Request-Id", id)
	resp, err := s.InternalClient(pki.Parser).Do(req)
	if err != nil {
		s.T.Fatal(err)
	}
	defer resp.Body.Close()
	var answer struct{ Status string }
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != 200 || answer.Status != "parsed" {
		s.T.Fatalf("parser results: %d %+v %v", resp.StatusCode, answer, err)
	}
	return id
}

// CopyDatabase copies the stack's live SQLite database, consistently
// (VACUUM INTO), into a data directory of its own, runs the statement
// query (when not empty) on the copy, which must change one row, and
// returns the directory.
func (s *Stack) CopyDatabase(t *testing.T, query string, args ...any) string {
	t.Helper()
	dir := t.TempDir()
	live, err := sql.Open("sqlite", filepath.Join(s.Dir, "backend", "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if _, err := live.Exec(`VACUUM INTO ?`, filepath.Join(dir, "hdc.db")); err != nil {
		t.Fatal(err)
	}
	if query == "" {
		return dir
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Exec(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("the tampering changed %d rows (%v), want 1", n, err)
	}
	return dir
}
