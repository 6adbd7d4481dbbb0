package fhirview

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
)

const (
	tClient  = audittest.Client
	tGrant   = audittest.Grant
	tCare    = audittest.CareContext
	tRequest = audittest.Request
	tSub     = audittest.Subscription
)

var tAt = time.Date(2026, 11, 22, 10, 30, 0, 123456000, time.UTC)

func sampleRecords(t testing.TB) []audit.Record {
	t.Helper()
	recs, err := audittest.Records("ws-1", tAt)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func decode(t testing.TB, r audit.Record) map[string]any {
	t.Helper()
	data, err := AuditEvent(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func dig(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func TestAuditEventMapping(t *testing.T) {
	recs := sampleRecords(t)
	tests := []struct {
		rec                         audit.Record
		typ, subtype, action, outcm string
		who, network, entity        string
	}{
		{recs[0], "110114", "110122", "E", "0", tClient, "203.0.113.7", ""},
		{recs[2], "110114", "110122", "E", "4", "", "2001:db8::1", ""},
		{recs[4], "110113", "110122", "E", "4", tClient, "", ""},
		{recs[5], "110110", "create", "C", "0", tClient, "", tCare},
		{recs[6], "110110", "read", "R", "4", tClient, "", tCare},
		{recs[7], "110110", "update", "U", "0", "", "", tCare},
		{recs[8], "rest", "create", "C", "0", tClient, "", tSub},
		{recs[9], "rest", "delete", "D", "0", tClient, "", tSub},
		{recs[10], "110100", "", "U", "0", "hdc-backend", "", tSub},
		{recs[12], "110113", "110137", "U", "8", "", "", tClient},
		{recs[13], "110113", "110136", "C", "0", "", "", tGrant},
		{recs[15], "110113", "110137", "C", "0", "", "", "k_2"},
		{recs[18], "110113", "110129", "U", "0", "", "", "0123456789abcdef"},
		{recs[19], "110114", "110122", "E", "4", "", "2001:db8::1", ""},
		{recs[20], "rest", "delete", "D", "0", "alice@example.org", "", tSub},
		{recs[21], "110113", "110137", "U", "0", "alice@example.org", "", "7f0e"},
		{recs[22], "110101", "search-type", "E", "0", "bob@example.org", "", "ws-1"},
		{recs[23], "110101", "read", "R", "0", "bob@example.org", "", ""},
		{recs[24], "110101", "", "E", "0", "alice@example.org", "", ""},
		{recs[25], "rest", "update", "U", "0", tClient, "", tSub},
		{recs[26], "rest", "update", "U", "0", tClient, "", tSub},
		{recs[27], "110100", "", "U", "0", "hdc-backend", "", tSub},
		{recs[28], "110113", "110129", "U", "0", tClient, "", tSub},
		{recs[29], "110100", "", "E", "0", tClient, "", tSub},
		{recs[30], "110100", "", "E", "0", "alice@example.org", "", tSub},
		{recs[31], "110113", "110129", "U", "0", "alice@example.org", "", tClient},
		{recs[32], "110113", "110129", "C", "0", "alice@example.org", "", audittest.Destination},
		{recs[33], "110113", "110129", "U", "0", "alice@example.org", "", audittest.Destination},
		{recs[34], "110113", "110137", "U", "0", "alice@example.org", "", tClient},
		{recs[35], "110113", "110129", "U", "0", "alice@example.org", "", tClient},
		{recs[36], "110113", "110129", "U", "0", "alice@example.org", "", tClient},
		{recs[37], "rest", "update", "U", "0", "alice@example.org", "", tSub},
		{recs[38], "110100", "", "E", "0", "alice@example.org", "", tSub},
		{recs[39], "110101", "", "D", "0", "hdc-backend", "", ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.rec.Action)+"/"+string(tt.rec.Outcome), func(t *testing.T) {
			m := decode(t, tt.rec)
			checks := []struct {
				name      string
				got, want any
			}{
				{"resourceType", m["resourceType"], "AuditEvent"},
				{"id", m["id"], AuditEventID("ws-1", tt.rec.Seq)},
				{"type", dig(m, "type", "code"), tt.typ},
				{"action", m["action"], tt.action},
				{"outcome", m["outcome"], tt.outcm},
				{"recorded", m["recorded"], "2026-11-22T10:30:00.123Z"},
				{"source type", dig(m, "source", "type", 0, "code"), "4"},
				{"extension action", dig(m, "extension", 0, "valueCode"), string(tt.rec.Action)},
			}
			if tt.subtype != "" {
				checks = append(checks, struct {
					name      string
					got, want any
				}{"subtype", dig(m, "subtype", 0, "code"), tt.subtype})
			} else if m["subtype"] != nil {
				t.Errorf("subtype %v, want none", m["subtype"])
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
				}
			}
			if who := dig(m, "agent", 0, "who", "identifier", "value"); tt.who != "" && who != tt.who {
				t.Errorf("agent.who = %v, want %s", who, tt.who)
			}
			if got, _ := dig(m, "agent", 0, "network", "address").(string); got != tt.network {
				t.Errorf("agent.network.address = %q, want %q", got, tt.network)
			}
			if tt.network != "" && dig(m, "agent", 0, "network", "type") != "2" {
				t.Errorf("agent.network.type = %v, want 2", dig(m, "agent", 0, "network", "type"))
			}
			if got, _ := dig(m, "entity", 0, "what", "identifier", "value").(string); tt.entity != "" && got != tt.entity {
				t.Errorf("entity.what = %q, want %q", got, tt.entity)
			}
		})
	}
}

// TestAuditEventOfAPerson: an operator's change names the person as a
// human user with the certificate's role and serial; a direct one is
// marked as such.
func TestAuditEventOfAPerson(t *testing.T) {
	recs := sampleRecords(t)
	tests := []struct {
		name       string
		rec        audit.Record
		person     audit.Person
		wantDirect bool
		wantAltID  any
	}{
		{"an operator's retirement", recs[17], audittest.Operator, false, audittest.Operator.Serial},
		{"an auditor's search", recs[22], audittest.Auditor, false, audittest.Auditor.Serial},
		{"a direct rewrap", recs[18], audittest.Direct, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := decode(t, tt.rec)
			checks := []struct {
				name      string
				got, want any
			}{
				{"type", dig(m, "agent", 0, "type", "coding", 0, "code"), "humanuser"},
				{"role", dig(m, "agent", 0, "role", 0, "coding", 0, "code"), string(tt.person.Role)},
				{"who", dig(m, "agent", 0, "who", "identifier", "value"), tt.person.Name},
				{"who's system", dig(m, "agent", 0, "who", "identifier", "system"), PersonSystem},
				{"name", dig(m, "agent", 0, "name"), tt.person.Name},
				{"altId", dig(m, "agent", 0, "altId"), tt.wantAltID},
				{"requestor", dig(m, "agent", 0, "requestor"), true},
				{"direct", dig(m, "agent", 0, "extension", 0, "valueBoolean") == true, tt.wantDirect},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("agent %s = %v, want %v", c.name, c.got, c.want)
				}
			}
		})
	}
}

// TestAuditEventCount: a record standing for several refusals says how
// many, in an extension and in outcomeDesc; a single one says nothing.
func TestAuditEventCount(t *testing.T) {
	recs := sampleRecords(t)
	m := decode(t, recs[19])
	if got := dig(m, "extension", 2, "url"); got != AuditCountExtension {
		t.Fatalf("extension 2 is %v, want the count", got)
	}
	if got := dig(m, "extension", 2, "valuePositiveInt"); got != float64(9) {
		t.Fatalf("count %v, want 9", got)
	}
	if desc, _ := m["outcomeDesc"].(string); !strings.Contains(desc, "9 times") {
		t.Fatalf("outcomeDesc %q", desc)
	}
	if single := decode(t, recs[2]); dig(single, "extension", 2, "url") != nil || single["outcomeDesc"] != nil {
		t.Fatalf("a single refusal says a count: %v", single)
	}
}

func TestAuditEventCarriesGrantKidAndRequest(t *testing.T) {
	recs := sampleRecords(t)
	m := decode(t, recs[0])
	data, _ := json.Marshal(m["entity"])
	for _, want := range []string{`"k_1"`, `"` + tRequest + `"`, KidSystem, RequestSystem} {
		if !strings.Contains(string(data), want) {
			t.Errorf("entities %s lack %s", data, want)
		}
	}
	if dig(m, "agent", 0, "requestor") != true {
		t.Error("the client is not the requestor")
	}
	g := decode(t, recs[1])
	if dig(g, "agent", 0, "policy", 0) != "urn:uuid:"+tGrant {
		t.Errorf("agent.policy = %v, want the grant", dig(g, "agent", 0, "policy"))
	}
}

// TestAuditEventOfARotation: a rotation's AuditEvent names the key it made,
// with what it gave up, and each key it moved to retiring.
func TestAuditEventOfARotation(t *testing.T) {
	r, err := audit.Next(audit.Link{}, audit.Event{At: tAt, Action: audit.KeyRotate, Outcome: audit.Success, Workspace: "ws-1",
		Entity: audit.Entity{Kind: audit.EntityKey, ID: "k-new"}, Replaced: []string{"k-old"}, Weakened: []string{"enc", "freshness"}})
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, r)
	if dig(m, "entity", 0, "what", "identifier", "value") != "k-new" || dig(m, "entity", 1, "what", "identifier", "value") != "k-old" ||
		dig(m, "entity", 1, "what", "identifier", "system") != KidSystem {
		t.Fatalf("entities %v: want the new key, then the key it replaced", m["entity"])
	}
	for i, lost := range []string{"enc", "freshness"} {
		if dig(m, "entity", 0, "detail", i, "type") != "weakened" || dig(m, "entity", 0, "detail", i, "valueString") != lost {
			t.Fatalf("the new key's details %v: want weakened %s", dig(m, "entity", 0, "detail"), lost)
		}
	}
}

// TestAuditEventOfADisabling: the record of a subscription the backend
// disabled says why, as a detail of the subscription.
func TestAuditEventOfADisabling(t *testing.T) {
	for _, reason := range []string{"gone", "failing"} {
		t.Run(reason, func(t *testing.T) {
			r, err := audit.Next(audit.Link{}, audit.Event{At: tAt, Action: audit.DeliveryDisabled, Outcome: audit.Success, Workspace: "ws-1",
				Entity: audit.Entity{Kind: audit.EntitySubscription, ID: tSub}, Reason: reason})
			if err != nil {
				t.Fatal(err)
			}
			m := decode(t, r)
			if dig(m, "entity", 0, "detail", 0, "type") != "reason" || dig(m, "entity", 0, "detail", 0, "valueString") != reason {
				t.Fatalf("the subscription's details %v: want reason %s", dig(m, "entity", 0, "detail"), reason)
			}
		})
	}
}

// TestAuditEventEveryAction: every action has a mapping, so no record
// falls back to the default.
func TestAuditEventEveryAction(t *testing.T) {
	seen := map[audit.Action]bool{}
	for _, r := range sampleRecords(t) {
		if _, ok := auditMappings[r.Action]; !ok {
			t.Errorf("%s has no mapping", r.Action)
		}
		seen[r.Action] = true
	}
	if len(seen) != len(auditMappings) {
		t.Errorf("the samples cover %d actions, the mapping %d", len(seen), len(auditMappings))
	}
}

// TestAuditSearchset: a page's entries are its records' AuditEvents, in
// order, and its links the page's.
func TestAuditSearchset(t *testing.T) {
	recs := sampleRecords(t)
	data, err := AuditSearchset(AuditPage{Records: recs, Self: "/s?_count=21", Next: "/s?_count=21&_cursor=21", At: tAt})
	if err != nil {
		t.Fatal(err)
	}
	var b map[string]any
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	if dig(b, "link", 0, "url") != "/s?_count=21" || dig(b, "link", 1, "url") != "/s?_count=21&_cursor=21" {
		t.Fatalf("links %v", b["link"])
	}
	entries, _ := b["entry"].([]any)
	if len(entries) != len(recs) {
		t.Fatalf("%d entries, want %d", len(entries), len(recs))
	}
	for i, r := range recs {
		if dig(entries, i, "resource", "resourceType") != "AuditEvent" || dig(entries, i, "resource", "id") != AuditEventID(r.Workspace, r.Seq) {
			t.Fatalf("entry %d is not record %d's AuditEvent: %v", i, r.Seq, entries[i])
		}
	}
}

// TestAuditEventChanges: the values an operator's change moved are the
// entity's details, before and after, a value not set left out.
func TestAuditEventChanges(t *testing.T) {
	recs := sampleRecords(t)
	for _, tt := range []struct {
		rec  audit.Record
		want map[string]string
	}{
		{recs[34], map[string]string{"before:name": "Clinic 7", "after:name": "Clinic Seven",
			"before:label:env": "staging", "after:label:env": "prod", "after:label:tier": "gold"}},
		{recs[35], map[string]string{"after:limits": `{"rates":{"reads":{"per_second":5,"burst":10}}}`}},
		{recs[36], map[string]string{"before:limits": `{"rates":{"reads":{"per_second":5,"burst":10}}}`}},
	} {
		t.Run(string(tt.rec.Action), func(t *testing.T) {
			details, _ := dig(decode(t, tt.rec), "entity", 0, "detail").([]any)
			got := map[string]string{}
			for _, d := range details {
				got[dig(d, "type").(string)] = dig(d, "valueString").(string)
			}
			if len(got) != len(details) || len(got) != len(tt.want) {
				t.Fatalf("details %v, want %v", details, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("detail %s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}
