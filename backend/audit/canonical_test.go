package audit

import (
	"bytes"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/contract"
)

func mustNext(t testing.TB, last Link, e Event) Record {
	t.Helper()
	r, err := Next(last, e)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCanonicalGolden holds the canonical form, which stored chains
// depend on: a change here breaks every chain already written.
func TestCanonicalGolden(t *testing.T) {
	r := mustNext(t, Link{Seq: 6, Hash: Hash{0xab, 0xcd}}, retrieve())
	want := `{"v":1,"workspace":"clinic-1","seq":7,` +
		`"prev":"abcd000000000000000000000000000000000000000000000000000000000000",` +
		`"at":"2026-03-14T15:09:26.535897Z","action":"record_retrieve","outcome":"success",` +
		`"client":"5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01","grant":"7c2d4e6f-8a9b-4c1d-8e2f-3a4b5c6d7e02",` +
		`"entity":{"kind":"care_context","id":"9e8d7c6b-5a49-4382-9716-0f1e2d3c4b03"},` +
		`"source":"203.0.113.9","kid":"client-1:2026","request":"1f2e3d4c-5b6a-4798-8877-665544332204"}`
	if got := string(r.Canonical()); got != want {
		t.Fatalf("canonical form\n got %s\nwant %s", got, want)
	}
	const wantHash = "f7b1f0e35c2a7afbed644cca33866bd7590d322799325452a1a3904b26064bfd"
	if got := r.Hash().String(); got != wantHash {
		t.Fatalf("hash %s, want %s", got, wantHash)
	}

	p := mustNext(t, Link{}, Event{At: t0, Action: RetentionPrune, Outcome: Success, Pruned: Pruned{From: 1, Last: Link{Seq: 9, Hash: Hash{0xff}}}})
	want = `{"v":1,"workspace":"","seq":1,"prev":"0000000000000000000000000000000000000000000000000000000000000000",` +
		`"at":"2026-03-14T15:09:26.535897Z","action":"retention_prune","outcome":"success",` +
		`"pruned":{"from":1,"through":9,"last":"ff00000000000000000000000000000000000000000000000000000000000000"}}`
	if got := string(p.Canonical()); got != want {
		t.Fatalf("canonical form\n got %s\nwant %s", got, want)
	}

	k := mustNext(t, Link{}, Event{At: t0, Action: KeyRotate, Outcome: Success, Workspace: "clinic-1",
		Entity: Entity{Kind: EntityKey, ID: "k2"}, Replaced: []string{"k1"}, Weakened: []string{"enc", "freshness"}})
	want = `{"v":1,"workspace":"clinic-1","seq":1,"prev":"0000000000000000000000000000000000000000000000000000000000000000",` +
		`"at":"2026-03-14T15:09:26.535897Z","action":"key_rotate","outcome":"success","entity":{"kind":"key","id":"k2"},` +
		`"replaced":["k1"],"weakened":["enc","freshness"]}`
	if got := string(k.Canonical()); got != want {
		t.Fatalf("canonical form\n got %s\nwant %s", got, want)
	}

	a := mustNext(t, Link{}, Event{At: t0, Action: KeyRetire, Outcome: Success, Workspace: "clinic-1",
		Entity: Entity{Kind: EntityKey, ID: "k1"}, Person: alice})
	want = `{"v":1,"workspace":"clinic-1","seq":1,"prev":"0000000000000000000000000000000000000000000000000000000000000000",` +
		`"at":"2026-03-14T15:09:26.535897Z","action":"key_retire","outcome":"success","entity":{"kind":"key","id":"k1"},` +
		`"person":{"name":"alice@example.org","serial":"0a1b2c","role":"operator"}}`
	if got := string(a.Canonical()); got != want {
		t.Fatalf("canonical form\n got %s\nwant %s", got, want)
	}

	u := mustNext(t, Link{}, Event{At: t0, Action: ClientUpdate, Outcome: Success, Workspace: "clinic-1",
		Entity: Entity{Kind: EntityClient, ID: client1}, Person: alice, Changes: []Change{
			{Field: ChangeName, Before: "Clinic <7>", After: "Clinique Sept"}, {Field: ChangeLabel + "env", After: "prod"}}})
	want = `{"v":1,"workspace":"clinic-1","seq":1,"prev":"0000000000000000000000000000000000000000000000000000000000000000",` +
		`"at":"2026-03-14T15:09:26.535897Z","action":"client_update","outcome":"success","entity":{"kind":"client","id":"` + client1 + `"},` +
		`"person":{"name":"alice@example.org","serial":"0a1b2c","role":"operator"},` +
		`"changes":[{"field":"name","before":"Clinic \u003c7\u003e","after":"Clinique Sept"},{"field":"label:env","after":"prod"}]}`
	if got := string(u.Canonical()); got != want {
		t.Fatalf("canonical form\n got %s\nwant %s", got, want)
	}

	o := mustNext(t, Link{}, Event{At: t0, Action: KeyAdd, Outcome: Success, Workspace: "clinic-1",
		Entity: Entity{Kind: EntityKey, ID: "k3"}, Person: alice, Owner: client1})
	want = `{"v":1,"workspace":"clinic-1","seq":1,"prev":"0000000000000000000000000000000000000000000000000000000000000000",` +
		`"at":"2026-03-14T15:09:26.535897Z","action":"key_add","outcome":"success","entity":{"kind":"key","id":"k3"},` +
		`"person":{"name":"alice@example.org","serial":"0a1b2c","role":"operator"},"owner":"` + client1 + `"}`
	if got := string(o.Canonical()); got != want {
		t.Fatalf("canonical form\n got %s\nwant %s", got, want)
	}

	c := mustNext(t, Link{}, Event{At: t0, Action: LoginFailed, Outcome: Denied, Source: netip.MustParseAddr("203.0.113.9"), Count: 9})
	want = `{"v":1,"workspace":"","seq":1,"prev":"0000000000000000000000000000000000000000000000000000000000000000",` +
		`"at":"2026-03-14T15:09:26.535897Z","action":"login_failed","outcome":"denied","source":"203.0.113.9","count":9}`
	if got := string(c.Canonical()); got != want {
		t.Fatalf("canonical form\n got %s\nwant %s", got, want)
	}
}

// TestCanonicalUnchangedByChanges: a record of a version before changes
// were recorded (a client_limits_set without them, as every such record
// was) keeps its canonical bytes and its hash, so stored chains verify.
func TestCanonicalUnchangedByChanges(t *testing.T) {
	const stored = `{"v":1,"workspace":"clinic-1","seq":3,"prev":"abcd000000000000000000000000000000000000000000000000000000000000",` +
		`"at":"2026-03-14T15:09:26.535897Z","action":"client_limits_set","outcome":"success","entity":{"kind":"client","id":"` + client1 + `"},` +
		`"person":{"name":"alice@example.org","serial":"0a1b2c","role":"operator"}}`
	r, err := Parse([]byte(stored))
	if err != nil {
		t.Fatal(err)
	}
	if r.Changes != nil || string(r.Canonical()) != stored {
		t.Fatalf("an old record reads as %+v, written again as %s", r, r.Canonical())
	}
	if got := r.Hash().String(); got != Sum([]byte(stored)).String() {
		t.Fatalf("hash %s is not the stored bytes' %s", got, Sum([]byte(stored)))
	}
}

// TestCanonicalUnchangedByOwner: the key actions' records of a version
// before they named their key's client keep their canonical bytes and
// their hash, so stored chains verify, and read without an owner.
func TestCanonicalUnchangedByOwner(t *testing.T) {
	const head = `{"v":1,"workspace":"clinic-1","seq":3,"prev":"abcd000000000000000000000000000000000000000000000000000000000000",` +
		`"at":"2026-03-14T15:09:26.535897Z",`
	const by = `"person":{"name":"alice@example.org","serial":"0a1b2c","role":"operator"}}`
	for _, stored := range []string{
		head + `"action":"key_add","outcome":"success","entity":{"kind":"key","id":"k3"},` + by,
		head + `"action":"key_rotate","outcome":"success","entity":{"kind":"key","id":"k2"},"replaced":["k1"],"weakened":["enc"],` + by,
		head + `"action":"key_retire","outcome":"success","entity":{"kind":"key","id":"k1"},` + by,
		`{"v":2,"workspace":"","seq":1,"prev":"0000000000000000000000000000000000000000000000000000000000000000",` +
			`"at":"2026-03-14T15:09:26.535897Z","action":"key_add","outcome":"success","entity":{"kind":"key","id":"k3"},` + by,
	} {
		r, err := Parse([]byte(stored))
		if err != nil {
			t.Fatalf("%s: %v", stored, err)
		}
		if r.Owner != "" || string(r.Canonical()) != stored {
			t.Fatalf("an old record reads as %+v, written again as %s", r, r.Canonical())
		}
		if got := r.Hash().String(); got != Sum([]byte(stored)).String() {
			t.Fatalf("hash %s is not the stored bytes' %s", got, Sum([]byte(stored)))
		}
	}
}

func TestParseRoundTrip(t *testing.T) {
	minimal := Event{At: t0, Action: Login, Outcome: Success, Workspace: "w"}
	prune := Event{At: t0, Action: RetentionPrune, Outcome: Success, Workspace: "w", Pruned: Pruned{From: 3, Last: Link{Seq: 8, Hash: Hash{9}}}}
	repeated := Event{At: t0, Action: RecordRetrieve, Outcome: Denied, Workspace: "w", Count: 12}
	rotation := Event{At: t0, Action: KeyRotate, Outcome: Success, Workspace: "w", Entity: Entity{Kind: EntityKey, ID: "k2"},
		Replaced: []string{"k1", "k0"}, Weakened: []string{"freshness"}}
	direct := Event{At: t0, Action: KeyAdd, Outcome: Success, Entity: Entity{Kind: EntityKey, ID: "k2"},
		Person: Person{Name: "root@host-1", Role: contract.RoleOperator, Direct: true}}
	read := Event{At: t0, Action: AuditVerify, Outcome: Success, Person: Person{Name: "bob@example.org", Serial: "ff", Role: contract.RoleAuditor}}
	update := Event{At: t0, Action: ClientUpdate, Outcome: Success, Workspace: "w", Entity: Entity{Kind: EntityClient, ID: client1},
		Person: alice, Changes: []Change{{Field: ChangeName, Before: "Klinik Zürich & Söhne", After: "Klinik"}, {Field: ChangeLabel + "example.org/tier", Before: "gold"}}}
	owned := Event{At: t0, Action: KeyRetire, Outcome: Success, Workspace: "w", Entity: Entity{Kind: EntityKey, ID: "k1"}, Person: alice, Owner: client1}
	for _, e := range []Event{retrieve(), minimal, prune, repeated, rotation, direct, read, update, owned} {
		t.Run(string(e.Action), func(t *testing.T) {
			r := mustNext(t, Link{Seq: 41, Hash: Hash{4, 2}}, e)
			got, err := Parse(r.Canonical())
			if err != nil {
				t.Fatal(err)
			}
			if !got.At.Equal(r.At) || got.Hash() != r.Hash() {
				t.Fatalf("Parse(Canonical()) = %+v, want %+v", got, r)
			}
			got.At = r.At
			if !reflect.DeepEqual(got, r) {
				t.Fatalf("Parse(Canonical()) = %+v, want %+v", got, r)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	good := string(mustNext(t, Link{Seq: 6, Hash: Hash{0xab}}, retrieve()).Canonical())
	tests := []struct {
		name string
		in   string
	}{
		{"empty", ``},
		{"not an object", `[]`},
		{"spaces", strings.Replace(good, `,"seq"`, `, "seq"`, 1)},
		{"members reordered", strings.Replace(good, `{"v":1,"workspace":"clinic-1",`, `{"workspace":"clinic-1","v":1,`, 1)},
		{"member name in another case", strings.Replace(good, `"kid"`, `"Kid"`, 1)},
		{"repeated member", strings.Replace(good, `"outcome":"success"`, `"outcome":"denied","outcome":"success"`, 1)},
		{"unknown member", strings.Replace(good, `{"v":1,`, `{"v":1,"note":"x",`, 1)},
		{"escaped character", strings.Replace(good, `"clinic-1"`, `"clinic\u002d1"`, 1)},
		{"another format", strings.Replace(good, `"v":1`, `"v":3`, 1)},
		{"uppercase hex", strings.Replace(good, `"prev":"ab`, `"prev":"AB`, 1)},
		{"short hash", strings.Replace(good, `"prev":"ab`, `"prev":"`, 1)},
		{"time with an offset", strings.Replace(good, `.535897Z`, `.535897+00:00`, 1)},
		{"time in milliseconds", strings.Replace(good, `.535897Z`, `.535Z`, 1)},
		{"seq as a float", strings.Replace(good, `"seq":7`, `"seq":7.0`, 1)},
		{"seq zero", strings.Replace(good, `"seq":7`, `"seq":0`, 1)},
		{"source IPv4-mapped", strings.Replace(good, `203.0.113.9`, `::ffff:203.0.113.9`, 1)},
		{"source not canonical", strings.Replace(good, `203.0.113.9`, `203.000.113.9`, 1)},
		{"source not an address", strings.Replace(good, `203.0.113.9`, `example.org`, 1)},
		{"invalid event", strings.Replace(good, `"outcome":"success"`, `"outcome":"maybe"`, 1)},
		{"empty entity", strings.Replace(good, `{"kind":"care_context","id":"9e8d7c6b-5a49-4382-9716-0f1e2d3c4b03"}`, `{"kind":"","id":""}`, 1)},
		{"null entity", strings.Replace(good, `{"kind":"care_context","id":"9e8d7c6b-5a49-4382-9716-0f1e2d3c4b03"}`, `null`, 1)},
		{"trailing newline", good + "\n"},
		{"an empty person", good[:len(good)-1] + `,"person":{"name":"","role":""}}`},
		{"a person on a client's action", good[:len(good)-1] + `,"person":{"name":"alice@example.org","serial":"0a","role":"operator"}}`},
		{"changes on an action that records none", good[:len(good)-1] + `,"changes":[{"field":"name","after":"x"}]}`},
		{"an empty list of changes", good[:len(good)-1] + `,"changes":[]}`},
		{"an owner on an action on no key", good[:len(good)-1] + `,"owner":"` + client1 + `"}`},
		{"an empty owner", strings.Replace(good, `"kid":`, `"owner":"","kid":`, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.in == good {
				t.Fatal("the case does not change the record")
			}
			if r, err := Parse([]byte(tt.in)); err == nil {
				t.Fatalf("Parse accepted %s as %+v", tt.in, r)
			}
		})
	}
}

// FuzzParse holds that what Parse accepts is a valid record whose
// canonical form is the input, byte for byte: one record, one form.
func FuzzParse(f *testing.F) {
	f.Add(mustNext(f, Link{Seq: 6, Hash: Hash{0xab}}, retrieve()).Canonical())
	f.Add(mustNext(f, Link{}, Event{At: t0, Action: LoginFailed, Outcome: Denied}).Canonical())
	f.Add(mustNext(f, Link{Seq: 2}, Event{At: t0, Action: RetentionPrune, Outcome: Success, Pruned: Pruned{From: 1, Last: Link{Seq: 2, Hash: Hash{1}}}}).Canonical())
	f.Add([]byte(`{"v":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Parse(b)
		if err != nil {
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("Parse accepted an invalid record: %v", err)
		}
		if c := r.Canonical(); !bytes.Equal(c, b) {
			t.Fatalf("Parse(%q) is a record whose canonical form is %q", b, c)
		}
	})
}
