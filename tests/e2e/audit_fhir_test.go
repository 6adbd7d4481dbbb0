package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/audit/fhirview"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

const auditEventPath = "/health/api/v1/fhir/AuditEvent"

// bundleLink returns the Bundle's link of relation rel, or "".
func bundleLink(b map[string]any, rel string) string {
	links, _ := b["link"].([]any)
	for _, l := range links {
		if m, _ := l.(map[string]any); m["relation"] == rel {
			s, _ := m["url"].(string)
			return s
		}
	}
	return ""
}

// auditEntries returns the Bundle's AuditEvent resources.
func auditEntries(b map[string]any) []map[string]any {
	var out []map[string]any
	entries, _ := b["entry"].([]any)
	for _, e := range entries {
		res, _ := e.(map[string]any)["resource"].(map[string]any)
		out = append(out, res)
	}
	return out
}

// auditAction returns the trail's action an AuditEvent carries.
func auditAction(ev map[string]any) string {
	exts, _ := ev["extension"].([]any)
	for _, x := range exts {
		if m, _ := x.(map[string]any); m["url"] == fhirview.AuditActionExtension {
			s, _ := m["valueCode"].(string)
			return s
		}
	}
	return ""
}

// TestAuditEventFHIR goes through the real binaries: a client logs in,
// uploads and retrieves, then reads its workspace's trail, plain and
// encrypted (npm jose), a page at a time; every Bundle passes the FHIR
// validators, and the edge's answers the OpenAPI document. Another
// workspace's client and a sharing login see none of it.
func TestAuditEventFHIR(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	a, b := s.NewClient("audit-a"), s.NewClient("audit-b")
	ta := s.Login(a, false, "")
	file := []byte("consultation notes for the audit trail")
	id := s.Upload(a, ta, false, file, "")
	s.Retrieve(a, ta, true, id, file)

	// The whole trail of A's workspace, plain then encrypted: the same
	// events, valid either way.
	var all []map[string]any
	for _, encrypt := range []bool{false, true} {
		t.Run(fmt.Sprintf("encrypted=%v", encrypt), func(t *testing.T) {
			s.T = t
			bundle := hdctest.CheckAuditBundle(t, s.Send(a, encrypt, "GET", auditEventPath+"?_count=200", nil, hdctest.Bearer(ta)))
			if self := bundleLink(bundle, "self"); !strings.HasPrefix(self, auditEventPath) {
				t.Fatalf("self link %q", self)
			}
			if !encrypt {
				all = auditEntries(bundle)
			} else if got := auditEntries(bundle); len(got) < len(all) {
				t.Fatalf("the encrypted search found %d events, the plain one %d", len(got), len(all))
			}
		})
	}
	s.T = t

	// When the backend records the client's actions, the upload and the
	// retrieval are in the trail, by the record's care_context_id.
	var actions []string
	for _, ev := range all {
		actions = append(actions, auditAction(ev))
	}
	t.Logf("the trail of A's workspace: %v", actions)
	for _, want := range []string{"login", "record_upload", "record_retrieve"} {
		if !slices.Contains(actions, want) {
			t.Fatalf("the trail %v has no %s", actions, want)
		}
	}
	checkRecordEvents(t, s, a, ta, id)
	t.Run("paging", func(t *testing.T) { s.T = t; checkAuditPaging(t, s, a, ta, all) })
	s.T = t
	checkAuditDates(t, s, a, ta, len(all))
	checkAuditIsolation(t, s, a, ta, b, id, file)

	// Invalid parameters and no token.
	for _, q := range []string{"date=yesterday", "_count=0", "patient=x", "entity=" + id + "&entity=" + id} {
		hdctest.ExpectProblem(t, s.Send(a, false, "GET", auditEventPath+"?"+q, nil, hdctest.Bearer(ta)), 400, "invalid_request")
	}
	hdctest.ExpectProblem(t, s.Send(a, false, "GET", auditEventPath, nil, nil), 401, "missing_token")
}

// checkRecordEvents: the events of record id (by its care_context_id) and
// client a say who, from where, with which key, in which request, and
// carry no credential.
func checkRecordEvents(t *testing.T, s *hdctest.Stack, a *hdctest.APIClient, ta hdctest.Tokens, id string) {
	t.Helper()
	bundle := hdctest.CheckAuditBundle(t, s.Send(a, false, "GET", auditEventPath+"?entity="+id+"&agent="+a.ID, nil, hdctest.Bearer(ta)))
	var got []string
	for _, ev := range auditEntries(bundle) {
		got = append(got, auditAction(ev))
		data, _ := json.Marshal(ev)
		for _, want := range []string{`"value":"` + a.ID + `"`, `"value":"` + id + `"`, `"address":"127.0.0.1"`, fhirview.RequestSystem} {
			if !strings.Contains(string(data), want) {
				t.Errorf("%s lacks %s: %s", auditAction(ev), want, data)
			}
		}
		if auditAction(ev) == "record_retrieve" && !strings.Contains(string(data), `"value":"`+a.Kid+`"`) {
			t.Errorf("the encrypted retrieval does not name its kid: %s", data)
		}
		if strings.Contains(string(data), a.Secret) || strings.Contains(string(data), a.Key) || strings.Contains(string(data), ta.AccessToken) {
			t.Fatalf("an AuditEvent carries a credential: %s", data)
		}
	}
	if !slices.Equal(got, []string{"record_upload", "record_retrieve"}) {
		t.Fatalf("the record's events are %v, want its upload and its retrieval", got)
	}
}

// checkAuditPaging: _count=1 pages, followed by their next links, give
// the whole trail all in order, each page valid.
func checkAuditPaging(t *testing.T, s *hdctest.Stack, a *hdctest.APIClient, ta hdctest.Tokens, all []map[string]any) {
	t.Helper()
	var ids []string
	path := auditEventPath + "?_count=1"
	for pages := 0; path != ""; pages++ {
		if pages > len(all)+1 {
			t.Fatal("paging does not end")
		}
		bundle := hdctest.CheckAuditBundle(t, s.Send(a, false, "GET", path, nil, hdctest.Bearer(ta)))
		for _, ev := range auditEntries(bundle) {
			ids = append(ids, ev["id"].(string))
		}
		path = bundleLink(bundle, "next")
	}
	var want []string
	for _, ev := range all {
		want = append(want, ev["id"].(string))
	}
	if !slices.Equal(ids[:min(len(ids), len(want))], want) {
		t.Fatalf("the pages give %v, the whole trail %v", ids, want)
	}
}

// checkAuditDates: nothing is recorded in 2020, all n events of the trail
// are today's.
func checkAuditDates(t *testing.T, s *hdctest.Stack, a *hdctest.APIClient, ta hdctest.Tokens, n int) {
	t.Helper()
	today := time.Now().UTC().Format("2006-01-02")
	if got := len(auditEntries(hdctest.CheckAuditBundle(t, s.Send(a, false, "GET", auditEventPath+"?date=le2020-12-31", nil, hdctest.Bearer(ta))))); got != 0 {
		t.Fatalf("%d events in 2020", got)
	}
	q := url.Values{"date": {"ge" + today, "le" + today}, "_count": {"200"}}
	if got := len(auditEntries(hdctest.CheckAuditBundle(t, s.Send(a, false, "GET", auditEventPath+"?"+q.Encode(), nil, hdctest.Bearer(ta))))); got < n {
		t.Fatalf("%d events today, %d in all", got, n)
	}
}

// checkAuditIsolation: B's trail never holds A's record id; a sharing
// login of b into A's workspace is refused the trail, and its retrieval
// of the record is in A's trail, with the grant as the agent's policy.
func checkAuditIsolation(t *testing.T, s *hdctest.Stack, a *hdctest.APIClient, ta hdctest.Tokens, b *hdctest.APIClient, id string, file []byte) {
	t.Helper()
	tb := s.Login(b, false, "")
	bundle := hdctest.CheckAuditBundle(t, s.Send(b, true, "GET", auditEventPath+"?entity="+id, nil, hdctest.Bearer(tb)))
	if n := len(auditEntries(bundle)); n != 0 {
		t.Fatalf("B's trail holds %d events of A's record", n)
	}
	var grant struct {
		GrantID    string `json:"grant_id"`
		SharingKey string `json:"sharing_key"`
	}
	s.HDC(&grant, "sharing", "grant", "--workspace", a.Workspace, "--client", b.ID)
	shared := s.Login(b, false, grant.SharingKey)
	hdctest.ExpectProblem(t, s.Send(b, false, "GET", auditEventPath, nil, hdctest.Bearer(shared)), 403, "forbidden")
	hdctest.ExpectProblem(t, s.Send(b, true, "GET", auditEventPath, nil, hdctest.Bearer(shared)), 403, "forbidden")

	// B's retrieval of A's record through the grant is in A's trail, with
	// the grant as the agent's policy.
	s.Retrieve(b, shared, false, id, file)
	bundle = hdctest.CheckAuditBundle(t, s.Send(a, false, "GET", auditEventPath+"?entity="+id+"&agent="+b.ID, nil, hdctest.Bearer(ta)))
	evs := auditEntries(bundle)
	if len(evs) != 1 || auditAction(evs[0]) != "record_retrieve" {
		t.Fatalf("A's trail of B's accesses to the record: %s", bundle)
	}
	if data, _ := json.Marshal(evs[0]["agent"]); !strings.Contains(string(data), `"policy":["urn:uuid:`+grant.GrantID+`"]`) {
		t.Fatalf("the shared retrieval does not name its grant: %s", data)
	}
}

// TestAuditEventBundleValidates runs the FHIR validators of the end-to-end
// suite on a Bundle holding one AuditEvent of every action the trail
// records, as package fhirview maps them, including those no client can cause
// through the API (operator actions, retention): so every mapping, not
// only those the stack exercises, is held to the official R4 JSON schema,
// npm fhir and fhirpath.
func TestAuditEventBundleValidates(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 22, 10, 30, 0, 123456000, time.UTC)
	for _, ws := range []string{"demo", ""} {
		recs, err := audittest.Records(ws, at)
		if err != nil && ws == "" {
			continue // the installation's trail cannot hold every action
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, page := range []fhirview.AuditPage{
			{Records: recs, Self: auditEventPath, Next: auditEventPath + "?_cursor=19", At: at},
			{Self: auditEventPath + "?date=le2020", At: at},
		} {
			data, err := fhirview.AuditSearchset(page)
			if err != nil {
				t.Fatal(err)
			}
			hdctest.CheckAuditBundle(t, &hdctest.Response{Status: 200, Body: data})
			var b map[string]any
			_ = json.Unmarshal(data, &b)
			if n := len(auditEntries(b)); n != len(page.Records) {
				t.Fatalf("%d entries, want %d", n, len(page.Records))
			}
		}
	}
}
