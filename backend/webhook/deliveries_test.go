package webhook

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/internal/contract"
)

// logFixture is a store where workspace w1's subscription s1 has three
// deliveries (delivered, failed with an answer kept, given up) and w2's
// s2 one, and the mux that serves them.
type logFixture struct {
	mux http.Handler
	h   *DeliveryHandler
	ids []string // s1's deliveries: delivered, failed, given up
	s2d string   // s2's delivery
}

const (
	w1, w2 = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	s1, s2 = "a1111111-1111-4111-8111-111111111111", "b2222222-2222-4222-8222-222222222222"
)

func newLogFixture(t *testing.T) *logFixture {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	f := &logFixture{}
	for i, ws := range []struct{ ws, sub string }{{w1, s1}, {w2, s2}} {
		must(t, ensure(st, t, ws.ws))
		must(t, st.CreateSubscription(t.Context(), store.Subscription{ID: ws.sub, WorkspaceID: ws.ws, Endpoint: "https://example.com/" + ws.sub,
			Protocol: ProtocolHTTPS, EventNames: []string{"user.delete"}, Status: store.SubscriptionActive, CreatedAt: t0},
			0, audit.Event{At: t0, Action: audit.SubscriptionCreate, Outcome: audit.Success, Workspace: ws.ws,
				Entity: audit.Entity{Kind: audit.EntitySubscription, ID: ws.sub}}))
		for j := range 3 - 2*i {
			ids, err := st.PublishEvent(t.Context(), store.Event{ID: ws.sub + string(rune('a'+j)), WorkspaceID: ws.ws, Type: "user.delete",
				Data: []byte(`{}`), CreatedAt: t0.Add(time.Duration(j) * time.Second)})
			must(t, err)
			f.ids = append(f.ids, ids...)
		}
	}
	f.ids, f.s2d = f.ids[:3], f.ids[3]
	_, err = st.ClaimDeliveries(t.Context(), store.Claim{Owner: "o", Now: t0.Add(time.Minute), LeaseUntil: t0.Add(time.Hour), Limit: 10})
	must(t, err)
	finish := func(id, outcome string, code int, body string, next store.Next) {
		must(t, st.FinishAttempt(t.Context(), "o", store.Attempt{DeliveryID: id, StartedAt: t0.Add(time.Minute), Duration: 12 * time.Millisecond,
			Outcome: outcome, StatusCode: code, ResponseBody: body}, next))
	}
	finish(f.ids[0], "delivered", 204, "", store.Next{Status: store.DeliveryDelivered})
	finish(f.ids[1], "http_503", 503, "down for maintenance", store.Next{Status: store.DeliveryPending, RetryAt: t0.Add(2 * time.Hour)})
	finish(f.ids[2], "timeout", 0, "", store.Next{Status: store.DeliveryFailed})
	finish(f.s2d, "timeout", 0, "", store.Next{Status: store.DeliveryFailed})
	f.h = NewDeliveryHandler(st, st, zap.NewNop())
	mux := http.NewServeMux()
	p := contract.PathSubscriptions
	mux.HandleFunc("GET "+p+"/{id}/deliveries", f.h.List)
	mux.HandleFunc("GET "+p+"/{id}/deliveries/{delivery_id}", f.h.Get)
	mux.HandleFunc("POST "+p+"/{id}/deliveries/{delivery_id}/redeliver", f.h.Redeliver)
	mux.HandleFunc("POST "+p+"/{id}/recover", f.h.Recover)
	f.mux = web.RequireCaller(mux)
	return f
}

func ensure(st *sqlite.Store, t *testing.T, ws string) error {
	_, err := st.EnsureWorkspace(t.Context(), ws, time.Now())
	return err
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// call sends a request as a client of ws, with headers h (name, value…).
func (f *logFixture) call(ws, client, method, path, body string, h ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, contract.PathSubscriptions+path, strings.NewReader(body))
	r.Header.Set(contract.HeaderClientID, client)
	r.Header.Set(contract.HeaderWorkspaceID, ws)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(h); i += 2 {
		r.Header.Add(h[i], h[i+1])
	}
	w := httptest.NewRecorder()
	f.mux.ServeHTTP(w, r)
	return w
}

const c1, c2 = "c1111111-1111-4111-8111-111111111111", "c2222222-2222-4222-8222-222222222222"

// TestDeliveryRoutes: the delivery log, a delivery, redelivery and
// recovery answer their client's workspace, and refuse bad input and
// another workspace's ids (404, as a missing one).
func TestDeliveryRoutes(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	d := f.ids
	tests := []struct {
		name, ws, method, path, body string
		status                       int
		want                         string // in the body
	}{
		{"the log", w1, "GET", "/" + s1 + "/deliveries", "", 200, `"event_id":"msg_` + d[2] + `"`},
		{"failed ones", w1, "GET", "/" + s1 + "/deliveries?status=failed", "", 200, `"last_outcome":"http_503"`},
		{"a page of one", w1, "GET", "/" + s1 + "/deliveries?limit=1", "", 200, `"next":"`},
		{"the last page", w1, "GET", "/" + s1 + "/deliveries?limit=3", "", 200, `"next":null`},
		{"a bad limit", w1, "GET", "/" + s1 + "/deliveries?limit=0", "", 400, `invalid_request`},
		{"a bad status", w1, "GET", "/" + s1 + "/deliveries?status=lost", "", 400, `given_up`},
		{"a bad time", w1, "GET", "/" + s1 + "/deliveries?since=yesterday", "", 400, `RFC 3339`},
		{"a bad cursor", w1, "GET", "/" + s1 + "/deliveries?cursor=xyz", "", 400, `cursor`},
		{"an unknown parameter", w1, "GET", "/" + s1 + "/deliveries?page=2", "", 400, `unknown query parameter`},
		{"another workspace's log", w2, "GET", "/" + s1 + "/deliveries", "", 404, `not_found`},
		{"a missing subscription's log", w1, "GET", "/" + s2 + "x/deliveries", "", 404, `not_found`},
		{"a delivery", w1, "GET", "/" + s1 + "/deliveries/" + d[1], "", 200, `"response_body":"down for maintenance"`},
		{"another workspace's delivery", w2, "GET", "/" + s1 + "/deliveries/" + d[1], "", 404, `not_found`},
		{"a delivery under its own workspace's other subscription", w2, "GET", "/" + s2 + "/deliveries/" + d[1], "", 404, `not_found`},
		{"redeliver", w1, "POST", "/" + s1 + "/deliveries/" + d[0] + "/redeliver", "", 202, `"status":"pending"`},
		{"redeliver another workspace's", w2, "POST", "/" + s1 + "/deliveries/" + d[0] + "/redeliver", "", 404, `not_found`},
		{"redeliver through another subscription", w2, "POST", "/" + s2 + "/deliveries/" + d[0] + "/redeliver", "", 404, `not_found`},
		{"recover", w1, "POST", "/" + s1 + "/recover", `{"since":"2000-01-01T00:00:00Z"}`, 202, `{"recovered":2}`},
		{"recover another workspace's", w2, "POST", "/" + s1 + "/recover", `{"since":"2000-01-01T00:00:00Z"}`, 404, `not_found`},
		{"recover without since", w1, "POST", "/" + s1 + "/recover", `{}`, 400, `since`},
		{"recover with a bad since", w1, "POST", "/" + s1 + "/recover", `{"since":"2000-01-01"}`, 400, `RFC 3339`},
		{"recover with another member", w1, "POST", "/" + s1 + "/recover", `{"since":"2000-01-01T00:00:00Z","all":true}`, 400, `unknown member`},
		{"recover without a body", w1, "POST", "/" + s1 + "/recover", ``, 415, `unsupported_media_type`},
	}
	for _, tt := range tests {
		// In order: redelivery and recovery change the log.
		w := f.call(tt.ws, c1, tt.method, tt.path, tt.body)
		if w.Code != tt.status || !strings.Contains(w.Body.String(), tt.want) {
			t.Errorf("%s: %d %s, want %d with %s", tt.name, w.Code, w.Body, tt.status, tt.want)
		}
	}
}

// TestDeliveryPages: following next pages through the whole log, newest
// first, each delivery once.
func TestDeliveryPages(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	var got []string
	path := "/" + s1 + "/deliveries?limit=2"
	for path != "" {
		w := f.call(w1, c1, "GET", path, "")
		var p DeliveryPage
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &p) != nil {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
		for _, d := range p.Deliveries {
			got = append(got, d.ID)
		}
		path = ""
		if p.Next != nil {
			path = "/" + s1 + "/deliveries?limit=2&cursor=" + *p.Next
		}
	}
	if want := []string{f.ids[2], f.ids[1], f.ids[0]}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("pages %q, want %q", got, want)
	}
}

// TestRedeliverOnce: the same Idempotency-Key and request answer the
// first answer again; the same key for another request is refused; and a
// client's redeliveries over its rate are refused with Retry-After, another
// client's still served.
func TestRedeliverOnce(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	path := "/" + s1 + "/recover"
	first := f.call(w1, c1, "POST", path, `{"since":"2000-01-01T00:00:00Z"}`, web.HeaderIdempotencyKey, "k1")
	again := f.call(w1, c1, "POST", path, `{"since":"2000-01-01T00:00:00Z"}`, web.HeaderIdempotencyKey, "k1")
	if first.Code != 202 || again.Code != 202 || first.Body.String() != again.Body.String() || again.Header().Get(web.HeaderReplayed) != "true" {
		t.Fatalf("first %d %s, again %d %s (replayed %q)", first.Code, first.Body, again.Code, again.Body, again.Header().Get(web.HeaderReplayed))
	}
	if w := f.call(w1, c1, "POST", path, `{"since":"2001-01-01T00:00:00Z"}`, web.HeaderIdempotencyKey, "k1"); w.Code != 422 {
		t.Fatalf("another request under the key: %d %s", w.Code, w.Body)
	}
	redeliver := "/" + s1 + "/deliveries/" + f.ids[0] + "/redeliver"
	if w := f.call(w1, c1, "POST", redeliver, "", web.HeaderIdempotencyKey, "k2"); w.Code != 202 {
		t.Fatalf("a keyed redelivery without a body: %d %s", w.Code, w.Body)
	}
	var limited *httptest.ResponseRecorder
	for range RedeliverBurst + 1 {
		if w := f.call(w1, c1, "POST", redeliver, ""); w.Code == http.StatusTooManyRequests {
			limited = w
			break
		}
	}
	if limited == nil || limited.Header().Get("Retry-After") == "" || !strings.Contains(limited.Body.String(), "too_many_requests") {
		t.Fatalf("no refusal over the rate: %+v", limited)
	}
	if w := f.call(w1, c2, "POST", redeliver, ""); w.Code != 202 {
		t.Fatalf("another client: %d %s", w.Code, w.Body)
	}
}
