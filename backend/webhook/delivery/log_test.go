package delivery

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// attemptLine is what the line of one attempt says.
type attemptLine struct {
	level   zapcore.Level
	message string
	status  int // 0: no status field
}

// TestAttemptLogLines: each attempt of a delivery is one log line, at info
// level (at warn when it ends the delivery undelivered), naming the
// delivery, its event, subscription and workspace, the attempt's number,
// its outcome, the answer's status and how long it took; no line carries
// the payload, the endpoint's credentials or query, the signing key or the
// signature.
func TestAttemptLogLines(t *testing.T) {
	t.Parallel()
	const (
		key     = "a-signing-key-the-log-never-shows"
		payload = `{"note":"a payload the log never shows"}`
	)
	retrying, delivered := "webhook attempt failed; retrying", "webhook delivered"
	tests := []struct {
		name   string
		answer func(n int, w http.ResponseWriter, r *http.Request)
		want   []attemptLine
	}{
		{"delivered", status(http.StatusNoContent), []attemptLine{{zap.InfoLevel, delivered, 204}}},
		{"500, then delivered", func(n int, w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(map[bool]int{true: 500, false: 200}[n == 0])
		}, []attemptLine{{zap.InfoLevel, retrying, 500}, {zap.InfoLevel, delivered, 200}}},
		{"no answer in time, then delivered", func(n int, w http.ResponseWriter, r *http.Request) {
			if n == 0 {
				<-r.Context().Done()
				return
			}
			w.WriteHeader(http.StatusAccepted)
		}, []attemptLine{{zap.InfoLevel, retrying, 0}, {zap.InfoLevel, delivered, 202}}},
		{"410 disables the subscription", status(http.StatusGone),
			[]attemptLine{{zap.WarnLevel, "webhook subscription answered 410 Gone and is disabled", 410}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			core, logs := observer.New(zap.DebugLevel)
			h := start(t, func(c *Config) { c.Log, c.Timeout = zap.New(core), 300*time.Millisecond })
			rc := newReceiver(t, tt.answer)
			endpoint := strings.Replace(rc.srv.URL, "http://", "http://hook-user:hook-password@", 1) + "/hook?token=query-secret"
			subID := h.subscribe(endpoint, webhook.ProtocolHTTP, key)
			id := h.publish("receipt.created", payload)[0]
			d, attempts := h.finished(id)
			lines := func() []observer.LoggedEntry {
				return logs.Filter(func(e observer.LoggedEntry) bool { return e.ContextMap()["delivery_id"] == id }).All()
			}
			// The line follows the attempt's record.
			testkit.WaitFor(10*time.Second, func() bool { return len(lines()) >= len(attempts) })
			got := lines()
			if len(got) != len(tt.want) || len(attempts) != len(tt.want) {
				t.Fatalf("%d attempts, %d lines: %v; want %d of each", len(attempts), len(got), got, len(tt.want))
			}
			for i, e := range got {
				want := map[string]any{"delivery_id": id, "event_id": d.Event.ID, "subscription_id": subID,
					"workspace_id": "w1", "attempt": int64(i + 1), "outcome": attempts[i].Outcome}
				if tt.want[i].status != 0 {
					want["status"] = int64(tt.want[i].status)
				}
				fields := e.ContextMap()
				for k, v := range want {
					if fields[k] != v {
						t.Errorf("line %d, %q: %s = %v, want %v", i, e.Message, k, fields[k], v)
					}
				}
				if _, ok := fields["status"]; ok != (tt.want[i].status != 0) {
					t.Errorf("line %d, %q: status %v", i, e.Message, fields["status"])
				}
				if _, ok := fields["duration"].(time.Duration); !ok || e.Level != tt.want[i].level || e.Message != tt.want[i].message {
					t.Errorf("line %d: %s %q, duration %v; want %s %q with a duration", i, e.Level, e.Message, fields["duration"],
						tt.want[i].level, tt.want[i].message)
				}
			}
			checkNoSecrets(t, logs.All(), key, "a payload the log never shows", "hook-password", "query-secret", "v1,")
		})
	}
}

// checkNoSecrets fails t if any entry, encoded as the backend writes its
// lines, holds one of secrets.
func checkNoSecrets(t *testing.T, entries []observer.LoggedEntry, secrets ...string) {
	t.Helper()
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	for _, e := range entries {
		b, err := enc.EncodeEntry(e.Entry, e.Context)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if strings.Contains(b.String(), s) {
				t.Errorf("a log line holds %q: %s", s, b)
			}
		}
		b.Free()
	}
}
