package backend

import (
	"context"
	"net/netip"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/audit/fhirview"
	"github.com/health-data-connect/hdc/internal/contract"
)

// auditBundle is the part of a searchset Bundle the tests read.
type auditBundle struct {
	ResourceType string `json:"resourceType"`
	Type         string `json:"type"`
	Link         []struct {
		Relation string `json:"relation"`
		URL      string `json:"url"`
	} `json:"link"`
	Entry []struct {
		FullURL  string `json:"fullUrl"`
		Resource struct {
			ID        string `json:"id"`
			Action    string `json:"action"`
			Outcome   string `json:"outcome"`
			Recorded  string `json:"recorded"`
			Extension []struct {
				URL              string `json:"url"`
				ValueCode        string `json:"valueCode"`
				ValuePositiveInt int64  `json:"valuePositiveInt"`
			} `json:"extension"`
			Agent []struct {
				Who struct {
					Identifier struct{ Value string } `json:"identifier"`
				} `json:"who"`
				Policy  []string                 `json:"policy"`
				Network struct{ Address string } `json:"network"`
			} `json:"agent"`
			Entity []struct {
				What struct {
					Identifier struct{ System, Value string } `json:"identifier"`
				} `json:"what"`
			} `json:"entity"`
		} `json:"resource"`
	} `json:"entry"`
}

func (b auditBundle) link(rel string) string {
	for _, l := range b.Link {
		if l.Relation == rel {
			return l.URL
		}
	}
	return ""
}

// ids returns the AuditEvent ids of the Bundle, in order.
func (b auditBundle) ids() []string {
	var ids []string
	for _, e := range b.Entry {
		ids = append(ids, e.Resource.ID)
	}
	return ids
}

// TestAuditEventRoute serves the trail of the caller's workspace as a
// searchset Bundle: filters, paging by next links, isolation between
// workspaces, and a sharing login refused. The records are appended to
// the store directly, in 2020, and every search is bounded to 2020, so
// that the events the backend itself records (logins, uploads) do not
// count.
func TestAuditEventRoute(t *testing.T) {
	h := start(t, nil)
	ctx := context.Background()
	alice, bob, carol := h.client("alpha"), h.client("bravo"), h.client("charlie")
	grant, err := h.srv.Identity().GrantSharing(ctx, audittest.Operator, "alpha", carol.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	asAlice, asBob := h.as(h.login(alice, "")), h.as(h.login(bob, ""))
	asCarol, asCarolInAlpha := h.as(h.login(carol, "")), h.as(h.login(carol, grant.SharingKey))

	care1, care2 := "aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-000000000002"
	base := time.Date(2020, 3, 1, 12, 0, 0, 0, time.UTC)
	src := netip.MustParseAddr("198.51.100.4")
	appendAt := func(ws string, day int, e audit.Event) audit.Record {
		t.Helper()
		e.Workspace, e.At = ws, base.AddDate(0, 0, day)
		r, err := h.srv.store.AppendAudit(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var alpha []audit.Record
	alpha = append(alpha,
		appendAt("alpha", 0, audit.Event{Action: audit.RecordUpload, Outcome: audit.Success, Client: alice.ClientID,
			Entity: audit.Entity{Kind: audit.EntityCareContext, ID: care1}, Source: src}),
		appendAt("alpha", 1, audit.Event{Action: audit.RecordRetrieve, Outcome: audit.Success, Client: carol.ClientID,
			Grant: grant.GrantID, Entity: audit.Entity{Kind: audit.EntityCareContext, ID: care1}, Source: src}),
		appendAt("alpha", 2, audit.Event{Action: audit.RecordUpload, Outcome: audit.Success, Client: alice.ClientID,
			Entity: audit.Entity{Kind: audit.EntityCareContext, ID: care2}}),
		appendAt("alpha", 3, audit.Event{Action: audit.RecordRetrieve, Outcome: audit.Denied, Client: alice.ClientID,
			Entity: audit.Entity{Kind: audit.EntityCareContext, ID: care2}}),
		appendAt("alpha", 4, audit.Event{Action: audit.Login, Outcome: audit.Success, Client: alice.ClientID}),
	)
	bravo := appendAt("bravo", 1, audit.Event{Action: audit.RecordUpload, Outcome: audit.Success, Client: bob.ClientID,
		Entity: audit.Entity{Kind: audit.EntityCareContext, ID: care1}})
	idsOf := func(recs ...audit.Record) []string {
		var ids []string
		for _, r := range recs {
			ids = append(ids, fhirview.AuditEventID(r.Workspace, r.Seq))
		}
		return ids
	}
	search := func(as []string, query string) auditBundle {
		t.Helper()
		res := h.do("GET", h.public+contract.PathAuditEvents+"?"+query, nil, as...)
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET ?%s: %d %s", query, res.StatusCode, res.body)
		}
		var b auditBundle
		res.json(t, &b)
		if b.ResourceType != "Bundle" || b.Type != "searchset" || b.link("self") == "" {
			t.Fatalf("not a searchset Bundle: %s", res.body)
		}
		return b
	}
	in2020 := "date=ge2020-01-01&date=lt2021-01-01"

	t.Run("filters", func(t *testing.T) {
		tests := []struct {
			name, query string
			as          []string
			want        []string
		}{
			{"the workspace's trail", in2020, asAlice, idsOf(alpha...)},
			{"another workspace's", in2020, asBob, idsOf(bravo)},
			{"a day, le to its end", "date=ge2020-03-02&date=le2020-03-03", asAlice, idsOf(alpha[1], alpha[2])},
			{"gt and lt", "date=gt2020-03-02&date=lt2020-03-05", asAlice, idsOf(alpha[2], alpha[3])},
			{"eq a day", "date=2020-03-04", asAlice, idsOf(alpha[3])},
			{"a dateTime", "date=ge2020-03-05T12:00:00Z&date=le2020-03-05T12:00:00Z", asAlice, idsOf(alpha[4])},
			{"entity", in2020 + "&entity=" + care1, asAlice, idsOf(alpha[0], alpha[1])},
			{"entity elsewhere", in2020 + "&entity=" + care1, asBob, idsOf(bravo)},
			{"a sharing client's accesses, seen by the owner", in2020 + "&agent=" + carol.ClientID, asAlice, idsOf(alpha[1])},
			{"the sharing client's own trail has none of them", in2020, asCarol, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if got := search(tt.as, tt.query).ids(); !slices.Equal(got, tt.want) {
					t.Fatalf("ids %v, want %v", got, tt.want)
				}
			})
		}
	})

	t.Run("mapping", func(t *testing.T) {
		b := search(asAlice, in2020+"&agent="+carol.ClientID)
		r := b.Entry[0].Resource
		if r.Action != "R" || r.Outcome != "0" || r.Recorded != "2020-03-02T12:00:00.000Z" ||
			r.Agent[0].Who.Identifier.Value != carol.ClientID || !slices.Equal(r.Agent[0].Policy, []string{"urn:uuid:" + grant.GrantID}) ||
			r.Agent[0].Network.Address != "198.51.100.4" || r.Entity[0].What.Identifier.Value != care1 ||
			r.Entity[0].What.Identifier.System != fhirview.CareContextSystem {
			t.Fatalf("AuditEvent %+v", r)
		}
	})

	t.Run("paging", func(t *testing.T) {
		var got []string
		b := search(asAlice, in2020+"&_count=2")
		pages := 1
		for {
			got = append(got, b.ids()...)
			next := b.link("next")
			if next == "" {
				break
			}
			u, err := url.Parse(next)
			if err != nil || u.Path != contract.PathAuditEvents {
				t.Fatalf("next link %q", next)
			}
			b = search(asAlice, u.RawQuery)
			if pages++; pages > 5 {
				t.Fatal("paging does not end")
			}
		}
		if want := idsOf(alpha...); !slices.Equal(got, want) || pages != 3 {
			t.Fatalf("%d pages of %v, want 3 of %v", pages, got, want)
		}
		// A full last page has no next link when nothing follows it.
		if b := search(asAlice, in2020+"&_count=5"); len(b.Entry) != 5 || b.link("next") != "" {
			t.Fatalf("%d entries, next %q", len(b.Entry), b.link("next"))
		}
	})

	t.Run("a sharing login is refused", func(t *testing.T) {
		wantProblem(t, h.do("GET", h.public+contract.PathAuditEvents, nil, asCarolInAlpha...), 403, "forbidden")
	})

	t.Run("invalid parameters", func(t *testing.T) {
		for _, q := range []string{"date=yesterday", "entity=x", "agent=a%20b", "_count=0", "_count=1000", "_cursor=x", "patient=1", "date=", "%zz"} {
			t.Run(q, func(t *testing.T) {
				wantProblem(t, h.do("GET", h.public+contract.PathAuditEvents+"?"+q, nil, asAlice...), 400, "invalid_request")
			})
		}
	})

	t.Run("without identity", func(t *testing.T) {
		wantProblem(t, h.do("GET", h.public+contract.PathAuditEvents, nil), 401, "unauthenticated")
	})
}
