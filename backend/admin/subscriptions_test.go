package admin

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/storetest"
	"github.com/health-data-connect/hdc/internal/contract"
)

// signingKey is the subscriptions' signing key, which no answer shows.
const signingKey = "whsec-0123456789abcdef"

// seedSubscriptions gives w1 two subscriptions (the second disabled) and w2
// one, in this order of creation, and returns their ids.
func seedSubscriptions(t *testing.T, a *api) []string {
	t.Helper()
	var ids []string
	for i, ws := range []string{"w1", "w2", "w1"} {
		if _, err := a.st.EnsureWorkspace(t.Context(), ws, time.Now()); err != nil {
			t.Fatal(err)
		}
		sub := store.Subscription{ID: uuid.NewString(), WorkspaceID: ws, Endpoint: "https://example.com/hook/" + ws, Protocol: "https",
			EventNames: []string{"user.delete"}, SigningKey: signingKey, Status: store.SubscriptionActive,
			CreatedAt: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC)}
		if i == 2 {
			sub.Status, sub.Endpoint = store.SubscriptionDisabled, sub.Endpoint+"/2"
		}
		e := audit.Event{At: sub.CreatedAt, Action: audit.SubscriptionCreate, Outcome: audit.Success, Workspace: ws,
			Entity: audit.Entity{Kind: audit.EntitySubscription, ID: sub.ID}}
		if err := a.st.CreateSubscription(t.Context(), sub, 0, e); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sub.ID)
	}
	return ids
}

// TestSubscriptions: both persons list and read the subscriptions of every
// workspace, a page at a time, by workspace and status, never a signing
// key; an operator deletes one, and its audit record names her.
func TestSubscriptions(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ids := seedSubscriptions(t, a)
	tests := []struct {
		name, query string
		want        []string
		next        bool
	}{
		{"every subscription", "", ids, false},
		{"a page", "?limit=2", ids[:2], true},
		{"a workspace", "?workspace=w1", []string{ids[0], ids[2]}, false},
		{"a status", "?status=disabled", ids[2:], false},
		{"both", "?workspace=w1&status=active", ids[:1], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p adminapi.Page[adminapi.Subscription]
			r := a.do("auditor", "GET", "/admin/v1/subscriptions"+tt.query, nil)
			r.decode(t, 200, &p)
			var got []string
			for _, s := range p.Items {
				got = append(got, s.ID)
			}
			if !slices.Equal(got, tt.want) || (p.Next != "") != tt.next || strings.Contains(string(r.body), signingKey) {
				t.Fatalf("got %s, want %v (a next page: %v)", r.body, tt.want, tt.next)
			}
		})
	}
	var first, rest adminapi.Page[adminapi.Subscription]
	a.do("auditor", "GET", "/admin/v1/subscriptions?limit=2", nil).decode(t, 200, &first)
	a.do("auditor", "GET", "/admin/v1/subscriptions?limit=2&cursor="+first.Next, nil).decode(t, 200, &rest)
	if len(rest.Items) != 1 || rest.Items[0].ID != ids[2] || rest.Next != "" {
		t.Fatalf("the page after the first: %+v", rest)
	}

	var sub adminapi.Subscription
	r := a.do("auditor", "GET", "/admin/v1/subscriptions/"+ids[1], nil)
	r.decode(t, 200, &sub)
	if sub.WorkspaceID != "w2" || !sub.HasSigningKey || sub.Status != "active" || strings.Contains(string(r.body), signingKey) {
		t.Fatalf("the subscription: %s", r.body)
	}
	a.do("operator", "DELETE", "/admin/v1/subscriptions/"+ids[1], nil).decode(t, 200, &sub)
	if sub.ID != ids[1] || sub.WorkspaceID != "w2" {
		t.Fatalf("deleted: %+v", sub)
	}
	if _, err := a.st.GetSubscription(t.Context(), "w2", ids[1]); err == nil {
		t.Fatal("the subscription is still there")
	}
	rs, err := a.st.ListAudit(t.Context(), store.AuditFilter{Workspace: "w2", Agent: alice, Entity: ids[1]})
	if err != nil || len(rs) != 1 || rs[0].Action != audit.SubscriptionDelete || rs[0].Person.Role != contract.RoleOperator || rs[0].Person.Serial == "" {
		t.Fatalf("w2's deletion by alice: %+v, %v", rs, err)
	}
}

// TestSubscriptionRefusals: bad input is a problem with a stable code and
// deletes nothing.
func TestSubscriptionRefusals(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ids := seedSubscriptions(t, a)
	tests := []struct {
		name, who, method, path string
		status                  int
		code                    string
	}{
		{"an auditor's deletion", "auditor", "DELETE", "/admin/v1/subscriptions/" + ids[0], 403, "forbidden"},
		{"deleting nothing", "operator", "DELETE", "/admin/v1/subscriptions/5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01", 404, "not_found"},
		{"an unknown subscription", "auditor", "GET", "/admin/v1/subscriptions/nothing", 404, "not_found"},
		{"an id of the wrong syntax", "operator", "DELETE", "/admin/v1/subscriptions/..%2f", 404, "not_found"},
		{"an unknown status", "auditor", "GET", "/admin/v1/subscriptions?status=revoked", 400, "invalid_request"},
		{"an invalid workspace", "auditor", "GET", "/admin/v1/subscriptions?workspace=a%2Fb", 400, "invalid_request"},
		{"an unknown parameter", "auditor", "GET", "/admin/v1/subscriptions?client=c1", 400, "invalid_request"},
		{"a limit of nothing", "auditor", "GET", "/admin/v1/subscriptions?limit=0", 400, "invalid_request"},
		{"failing neither true nor false", "auditor", "GET", "/admin/v1/subscriptions?failing=yes", 400, "invalid_request"},
		{"another method", "operator", "POST", "/admin/v1/subscriptions", 405, "method_not_allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := a.do(tt.who, tt.method, tt.path, nil)
			if r.status != tt.status || r.problemCode() != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.status, r.body, tt.status, tt.code)
			}
		})
	}
	if list, err := a.st.ListSubscriptions(t.Context(), store.SubscriptionFilter{}); err != nil || len(list) != len(ids) {
		t.Fatalf("the refusals deleted: %d left, %v", len(list), err)
	}
}

// TestSubscriptionsFailing: ?failing=true lists the subscription whose
// last attempt failed, with since when; a page reads a window of the
// subscriptions at most, so that one may come back empty with a next
// page, and the pages together hold each failing one once.
func TestSubscriptionsFailing(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ids := seedSubscriptions(t, a)
	storetest.FailAttempt(t, a.st, "w2", time.Now().UTC())
	for query, want := range map[string][]string{"?failing=true": ids[1:2], "?failing=false": ids, "?failing=true&workspace=w1": nil} {
		var p adminapi.Page[adminapi.Subscription]
		a.do("auditor", "GET", "/admin/v1/subscriptions"+query, nil).decode(t, 200, &p)
		got := idsOf(p.Items)
		if !slices.Equal(got, want) || p.Next != "" {
			t.Errorf("%s: %v (next %q), want %v", query, got, p.Next, want)
		}
		for _, s := range p.Items {
			if (s.FailingSince != nil) != (s.ID == ids[1]) {
				t.Errorf("%s: %s failing since %v", query, s.ID, s.FailingSince)
			}
		}
	}
	svc := New(a.st, nil, nil)
	q, pages := adminapi.SubscriptionQuery{Failing: true, Limit: 5}, []int{}
	var got []string
	for range 10 {
		p, err := svc.listSubscriptions(t.Context(), q, 1)
		if err != nil {
			t.Fatal(err)
		}
		got, pages = append(got, idsOf(p.Items)...), append(pages, len(p.Items))
		if q.Cursor = p.Next; q.Cursor == "" {
			break
		}
	}
	if !slices.Equal(got, ids[1:2]) || !slices.Equal(pages, []int{0, 1, 0}) {
		t.Fatalf("the failing ones a window of one at a time: %v in pages of %v, want %v in pages of [0 1 0]", got, pages, ids[1:2])
	}
}

// idsOf returns the id of each subscription, in order.
func idsOf(subs []adminapi.Subscription) []string {
	var out []string
	for _, s := range subs {
		out = append(out, s.ID)
	}
	return out
}

// TestEnableSubscription: an operator turns a disabled subscription of any
// workspace back on, and its subscription_enable record names her; an
// active one is answered as it is, recorded once; the same request under
// one Idempotency-Key is made once; an auditor, an unknown subscription
// and a path that names none are refused.
func TestEnableSubscription(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ids := seedSubscriptions(t, a)
	for _, tt := range []struct {
		name, who, id string
		status        int
		code          string
	}{
		{"an auditor", "auditor", ids[2], 403, "forbidden"},
		{"an unknown subscription", "operator", "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01", 404, "not_found"},
		{"no subscription id", "operator", "a%2Fb", 404, "not_found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if r := a.do(tt.who, "POST", "/admin/v1/subscriptions/"+tt.id+"/enable", nil); r.status != tt.status || r.problemCode() != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.status, r.body, tt.status, tt.code)
			}
		})
	}
	for i, key := range []string{"enable-1", "enable-1", "enable-2"} {
		var sub adminapi.Subscription
		a.do("operator", "POST", "/admin/v1/subscriptions/"+ids[2]+"/enable", nil, "Idempotency-Key", key).decode(t, 200, &sub)
		if sub.ID != ids[2] || sub.Status != "active" || sub.DisabledReason != nil || sub.WorkspaceID != "w1" {
			t.Fatalf("enabling %d: %+v", i, sub)
		}
	}
	rs, err := a.st.ListAudit(t.Context(), store.AuditFilter{Workspace: "w1", Agent: alice})
	if err != nil || len(rs) != 1 || rs[0].Action != audit.SubscriptionEnable || rs[0].Entity.ID != ids[2] || rs[0].Person.Serial == "" {
		t.Fatalf("w1's records by alice: %+v, %v", rs, err)
	}
}

// TestTestSubscription: an operator sends a subscription of any workspace
// a test event through the backend's sender, its signing key opened, and
// gets the attempt's result; each is recorded naming her before it goes;
// past the subscription's ration it is 429 with a Retry-After and sends
// nothing; an auditor and an unknown subscription are refused; without a
// sender (direct mode) it is refused.
func TestTestSubscription(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ids := seedSubscriptions(t, a)
	for _, tt := range []struct {
		name, who, id string
		status        int
		code          string
	}{
		{"an auditor", "auditor", ids[1], 403, "forbidden"},
		{"an unknown subscription", "operator", "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01", 404, "not_found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if r := a.do(tt.who, "POST", "/admin/v1/subscriptions/"+tt.id+"/test", nil); r.status != tt.status || r.problemCode() != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.status, r.body, tt.status, tt.code)
			}
		})
	}
	if n := len(a.tester.sent()); n != 0 {
		t.Fatalf("the refusals sent %d test events", n)
	}
	var res adminapi.TestEvent
	a.do("operator", "POST", "/admin/v1/subscriptions/"+ids[1]+"/test", nil).decode(t, 200, &res)
	if res != (adminapi.TestEvent{EventID: "msg_1", Outcome: "http_503", Status: 503, DurationMS: 1500}) {
		t.Fatalf("the test event: %+v", res)
	}
	if sent := a.tester.sent(); len(sent) != 1 || sent[0].ID != ids[1] || sent[0].SigningKey != "opened:"+signingKey {
		t.Fatalf("sent %+v", sent)
	}
	for range 4 { // the rest of the burst
		a.do("operator", "POST", "/admin/v1/subscriptions/"+ids[1]+"/test", nil).decode(t, 200, nil)
	}
	r := a.do("operator", "POST", "/admin/v1/subscriptions/"+ids[1]+"/test", nil)
	if r.status != 429 || r.problemCode() != "too_many_requests" || r.header.Get("Retry-After") == "" || len(a.tester.sent()) != 5 {
		t.Fatalf("past the ration: %d %s %v, %d sent", r.status, r.body, r.header, len(a.tester.sent()))
	}
	rs, err := a.st.ListAudit(t.Context(), store.AuditFilter{Workspace: "w2", Agent: alice})
	if err != nil || len(rs) != 5 || rs[0].Action != audit.SubscriptionTest || rs[0].Entity.ID != ids[1] {
		t.Fatalf("w2's records by alice: %d %+v, %v", len(rs), rs, err)
	}
	direct := New(a.st, nil, nil)
	ctx := audit.WithPerson(t.Context(), audit.LocalOperator())
	if _, err := direct.TestSubscription(ctx, ids[1]); !errors.Is(err, errNoTests) {
		t.Fatalf("a test event in direct mode: %v", err)
	}
}
