package webhook

import (
	"context"
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

// The subscriptions of the route tests: keyedSub (with a key) and
// bareSub (none) in w1; w2 is another workspace.
const (
	keyedSub = "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01"
	bareSub  = "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a02"
	firstKey = "first-key-0123456789"
	// routeClient is the client calling in serveAs.
	routeClient = "0e5b7d3a-9c41-4f2e-8a6d-3b1c2d4e5f60"
)

// routeStore is a SQLite store with keyedSub and bareSub in w1, and w2.
func routeStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, ws := range []string{"w1", "w2"} {
		if _, err := st.EnsureWorkspace(t.Context(), ws, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range []string{keyedSub, bareSub} {
		sub := store.Subscription{ID: id, WorkspaceID: "w1", Endpoint: "https://example.com/hook" + id, Protocol: ProtocolHTTPS,
			EventNames: []string{"user.delete"}, SigningKey: []string{firstKey, ""}[i], Status: store.SubscriptionActive, CreatedAt: time.Now()}
		if err := st.CreateSubscription(t.Context(), sub, 0, audit.Event{At: sub.CreatedAt, Action: audit.SubscriptionCreate,
			Outcome: audit.Success, Workspace: "w1", Entity: audit.Entity{Kind: audit.EntitySubscription, ID: id}}); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// serveAs serves body to h as the caller of workspace ws, on the
// subscription id, as the backend's route does; headers are name, value
// pairs to add.
func serveAs(h http.Handler, ws, id, body string, headers ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "/", strings.NewReader(body))
	r.SetPathValue("id", id)
	r.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	r.Header.Set(contract.HeaderClientID, routeClient)
	r.Header.Set(contract.HeaderWorkspaceID, ws)
	w := httptest.NewRecorder()
	web.RequireCaller(h).ServeHTTP(w, r)
	return w
}

// problemCode is the code of a problem answer.
func problemCode(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var p struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(w.Body.Bytes(), &p)
	return p.Code
}

// TestKeyRotationRoute: a key given or generated (whsec_, shown once)
// replaces the current one, which stays for the grace; bad bodies and keys
// are 400, another workspace's or an unknown subscription 404, and no
// answer quotes a key it was given.
func TestKeyRotationRoute(t *testing.T) {
	t.Parallel()
	st := routeStore(t)
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	k := NewKeyRotation(st, st, 24*time.Hour, zap.NewNop())
	k.now = func() time.Time { return now }
	for _, tt := range []struct {
		name, ws, id, body string
		status             int
		code               string
	}{
		{"another workspace's subscription", "w2", keyedSub, `{}`, http.StatusNotFound, "not_found"},
		{"an unknown subscription", "w1", "8d4fcd85-6ea1-4031-a276-5b104f9ead06", `{}`, http.StatusNotFound, "not_found"},
		{"a short key", "w1", keyedSub, `{"signing_key":"short-secret"}`, http.StatusBadRequest, "invalid_request"},
		{"an empty key", "w1", keyedSub, `{"signing_key":""}`, http.StatusBadRequest, "invalid_request"},
		{"a whsec_ key not base64", "w1", keyedSub, `{"signing_key":"whsec_not*base64*at-all"}`, http.StatusBadRequest, "invalid_request"},
		{"an unknown member", "w1", keyedSub, `{"key":"0123456789abcdefgh"}`, http.StatusBadRequest, "invalid_request"},
		{"not JSON", "w1", keyedSub, `signing_key`, http.StatusBadRequest, "invalid_json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := serveAs(k, tt.ws, tt.id, tt.body)
			if w.Code != tt.status || problemCode(t, w) != tt.code {
				t.Fatalf("%d %s, want %d %s", w.Code, w.Body, tt.status, tt.code)
			}
			if strings.Contains(w.Body.String(), "base64*at") || strings.Contains(w.Body.String(), "short-secret") {
				t.Fatalf("the answer quotes the key: %s", w.Body)
			}
		})
	}
	sub, _ := st.GetSubscription(t.Context(), "w1", keyedSub)
	if sub.SigningKey != firstKey || sub.PreviousSigningKey != "" {
		t.Fatalf("the refusals changed the keys: %+v", sub)
	}

	var out KeyRotated
	given := serveAs(k, "w1", keyedSub, `{"signing_key":"second-key-0123456789"}`)
	if err := json.Unmarshal(given.Body.Bytes(), &out); given.Code != http.StatusOK || err != nil || out.SigningKey != "" ||
		out.PreviousKeyExpiresAt == nil || !out.PreviousKeyExpiresAt.Equal(now.Add(24*time.Hour)) {
		t.Fatalf("a given key: %d %s", given.Code, given.Body)
	}
	generated := serveAs(k, "w1", keyedSub, `{}`)
	out = KeyRotated{}
	if err := json.Unmarshal(generated.Body.Bytes(), &out); generated.Code != http.StatusOK || err != nil ||
		!strings.HasPrefix(out.SigningKey, "whsec_") || CheckSigningKey(out.SigningKey) != nil {
		t.Fatalf("a generated key: %d %s", generated.Code, generated.Body)
	}
	sub, _ = st.GetSubscription(t.Context(), "w1", keyedSub)
	if sub.SigningKey != out.SigningKey || sub.PreviousSigningKey != "second-key-0123456789" {
		t.Fatalf("keys after two rotations: %q, previous %q", sub.SigningKey, sub.PreviousSigningKey)
	}
	first := serveAs(k, "w1", bareSub, `{}`)
	if !strings.Contains(first.Body.String(), `"previous_key_expires_at":null`) || first.Code != http.StatusOK {
		t.Fatalf("a first key: %d %s", first.Code, first.Body)
	}
	wantRotations(t, st, 3)
}

// TestKeyRotationOnce: a rotation sent again with its Idempotency-Key
// (its answer lost) is answered with the same generated key and changes
// nothing more, so the key the client last saw stays the previous one.
func TestKeyRotationOnce(t *testing.T) {
	t.Parallel()
	st := routeStore(t)
	k := NewKeyRotation(st, st, 24*time.Hour, zap.NewNop())
	const idem = "rotate-2026-11-29"
	a := serveAs(k, "w1", keyedSub, `{}`, "Idempotency-Key", idem)
	b := serveAs(k, "w1", keyedSub, `{}`, "Idempotency-Key", idem)
	if a.Code != http.StatusOK || b.Code != http.StatusOK || a.Body.String() != b.Body.String() || b.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("first %d %s; again %d %s %v", a.Code, a.Body, b.Code, b.Body, b.Header())
	}
	var out KeyRotated
	if err := json.Unmarshal(a.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	sub, _ := st.GetSubscription(t.Context(), "w1", keyedSub)
	if sub.SigningKey != out.SigningKey || sub.PreviousSigningKey != firstKey {
		t.Fatalf("keys after a repeated rotation: %q, previous %q; want %q, previous %q", sub.SigningKey, sub.PreviousSigningKey, out.SigningKey, firstKey)
	}
	if other := serveAs(k, "w1", keyedSub, `{"signing_key":"second-key-0123456789"}`, "Idempotency-Key", idem); other.Code != http.StatusUnprocessableEntity {
		t.Fatalf("another request under the key: %d %s", other.Code, other.Body)
	}
	wantRotations(t, st, 1)
}

// wantRotations fails unless w1's trail holds n signing_key_rotate
// records, each naming the client and the subscription.
func wantRotations(t *testing.T, st store.Store, n int) {
	t.Helper()
	rs, err := st.ListAudit(t.Context(), store.AuditFilter{Workspace: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, r := range rs {
		if r.Action != audit.SigningKeyRotate {
			continue
		}
		got++
		if r.Client != routeClient || r.Entity.Kind != audit.EntitySubscription || !contract.IsUUID(r.Entity.ID) {
			t.Errorf("a rotation's record: %+v", r.Event)
		}
	}
	if got != n {
		t.Fatalf("%d rotation records, want %d", got, n)
	}
}

// fakeTester records the subscriptions it is asked to test.
type fakeTester struct{ got []store.Subscription }

func (f *fakeTester) SendTest(_ context.Context, sub store.Subscription) TestResult {
	f.got = append(f.got, sub)
	return TestResult{EventID: "msg_1", Outcome: "http_503", Status: 503, Duration: 1500 * time.Millisecond}
}

// TestTestEventRoute: a test event goes to the caller's subscription with
// its keys opened and answers the attempt's result; another workspace's or
// an unknown subscription is 404 and sends nothing; past the burst the
// subscription's test events are 429 with a Retry-After.
func TestTestEventRoute(t *testing.T) {
	t.Parallel()
	st := routeStore(t)
	send := &fakeTester{}
	opened := func(s store.Subscription) store.Subscription { s.SigningKey = "opened:" + s.SigningKey; return s }
	h := NewTestEvents(st, opened, send, zap.NewNop())
	for _, tt := range []struct{ name, ws, id string }{
		{"another workspace's subscription", "w2", keyedSub},
		{"an unknown subscription", "w1", "8d4fcd85-6ea1-4031-a276-5b104f9ead06"},
	} {
		if w := serveAs(h, tt.ws, tt.id, ``); w.Code != http.StatusNotFound || problemCode(t, w) != "not_found" {
			t.Fatalf("%s: %d %s", tt.name, w.Code, w.Body)
		}
	}
	if len(send.got) != 0 {
		t.Fatalf("refused tests sent %d events", len(send.got))
	}
	w := serveAs(h, "w1", keyedSub, ``)
	if w.Code != http.StatusOK || strings.TrimSpace(w.Body.String()) != `{"event_id":"msg_1","outcome":"http_503","status":503,"duration_ms":1500}` {
		t.Fatalf("answer %d %s", w.Code, w.Body)
	}
	if len(send.got) != 1 || send.got[0].ID != keyedSub || send.got[0].SigningKey != "opened:"+firstKey {
		t.Fatalf("sent %+v", send.got)
	}
	for range testBurst - 1 {
		if w := serveAs(h, "w1", keyedSub, ``); w.Code != http.StatusOK {
			t.Fatalf("within the burst: %d %s", w.Code, w.Body)
		}
	}
	limited := serveAs(h, "w1", keyedSub, ``)
	if limited.Code != http.StatusTooManyRequests || problemCode(t, limited) != "too_many_requests" || limited.Header().Get("Retry-After") == "" {
		t.Fatalf("past the burst: %d %s %v", limited.Code, limited.Body, limited.Header())
	}
	if w := serveAs(h, "w1", bareSub, ``); w.Code != http.StatusOK {
		t.Fatalf("another subscription is limited apart: %d %s", w.Code, w.Body)
	}
}
