package webhook

import (
	"encoding/json"
	"errors"
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

func TestParsePatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body string
		want bool
		ok   bool
	}{
		{`{"enabled": true}`, true, true},
		{`{"enabled": false}`, false, true},
		{`{}`, false, false},
		{`{"enabled": null}`, false, false},
		{`{"enabled": true, "endpoint": "https://example.com"}`, false, false},
		{`{"enabled": "true"}`, false, false},
		{`{"enabled": true, "enabled": false}`, false, false},
		{`[true]`, false, false},
		{``, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			t.Parallel()
			got, err := ParsePatch([]byte(tt.body))
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("ParsePatch = %v, %v", got, err)
			}
		})
	}
}

func FuzzParsePatch(f *testing.F) {
	for _, s := range []string{`{"enabled":true}`, `{"enabled":false,"x":1}`, `{}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		enabled, err := ParsePatch(body)
		if err != nil {
			return
		}
		// What it accepts is exactly {"enabled": <bool>}.
		var back map[string]bool
		if json.Unmarshal(body, &back) != nil || len(back) != 1 || back["enabled"] != enabled {
			t.Fatalf("accepted %q as %v", body, enabled)
		}
	})
}

// Ids of TestPatch.
const (
	patchSub     = "0b8e2f5c-7a1d-4c3e-9f60-1a2b3c4d5e6f"
	patchClient1 = "4e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b"
	patchClient2 = "5f2a1b3c-4d5e-4f60-9b7c-8d9e0f1a2b3c"
)

// TestPatch: PATCH turns a subscription off (reason "client") and on,
// audited with the client; another workspace's id is 404 and a body with
// anything but enabled is 400.
func TestPatch(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, ws := range []string{"w1", "w2"} {
		if _, err := st.EnsureWorkspace(t.Context(), ws, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	sub := store.Subscription{ID: patchSub, WorkspaceID: "w1", Endpoint: "https://example.com/hook",
		Protocol: ProtocolHTTPS, EventNames: []string{"user.delete"}, Status: store.SubscriptionActive, CreatedAt: time.Now()}
	if err := st.CreateSubscription(t.Context(), sub, 0, audit.Event{At: sub.CreatedAt, Action: audit.SubscriptionCreate,
		Outcome: audit.Success, Workspace: "w1"}); err != nil {
		t.Fatal(err)
	}
	h := NewHandler(st, Rules{}, 0, zap.NewNop())
	mux := http.NewServeMux()
	mux.Handle("PATCH /subscriptions/{id}", web.RequireCaller(http.HandlerFunc(h.Patch)))
	patch := func(ws, client, body string) (int, map[string]any) {
		r := httptest.NewRequest(http.MethodPatch, "/subscriptions/"+patchSub, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set(contract.HeaderWorkspaceID, ws)
		r.Header.Set(contract.HeaderClientID, client)
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		var out map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &out)
		return w.Code, out
	}
	steps := []struct {
		name, ws, client, body string
		code                   int
		status, reason, errc   any
	}{
		{"another workspace", "w2", patchClient2, `{"enabled": false}`, 404, nil, nil, "not_found"},
		{"another member", "w1", patchClient1, `{"enabled": false, "endpoint": "https://example.org"}`, 400, nil, nil, "invalid_request"},
		{"no enabled", "w1", patchClient1, `{}`, 400, nil, nil, "invalid_request"},
		{"off", "w1", patchClient1, `{"enabled": false}`, 200, "disabled", "client", nil},
		{"on", "w1", patchClient1, `{"enabled": true}`, 200, "active", nil, nil},
	}
	for _, s := range steps {
		code, out := patch(s.ws, s.client, s.body)
		if s.code != 200 {
			out["status"] = nil // the problem's
		}
		if code != s.code || out["status"] != s.status || out["disabled_reason"] != s.reason || out["code"] != s.errc {
			t.Fatalf("%s: %d %v", s.name, code, out)
		}
	}
	rs, err := st.ListAudit(t.Context(), store.AuditFilter{Workspace: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	var actions []audit.Action
	for _, r := range rs {
		if r.Client == patchClient1 && r.Entity.ID == patchSub {
			actions = append(actions, r.Action)
		}
	}
	if len(actions) != 2 || actions[0] != audit.SubscriptionDisable || actions[1] != audit.SubscriptionEnable {
		t.Fatalf("audited %v", actions)
	}
	if _, err := NewService(st).SetEnabled(t.Context(), "w2", patchSub, true, audit.Event{Workspace: "w2"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another workspace's subscription: %v", err)
	}
}
