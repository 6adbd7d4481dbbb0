package auth_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/auth"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/store"
)

// unauditedStore is a flakyStore whose trail cannot be written to on its
// own (the appends inside a change's transaction are the engine's).
type unauditedStore struct{ *flakyStore }

func (unauditedStore) AppendAudit(context.Context, audit.Event) (audit.Record, error) {
	return audit.Record{}, errors.New("the trail is unavailable")
}

// newHandler is f's handler with trail as its audit trail.
func newHandler(t *testing.T, f *fixture, trail store.Audit) *auth.Handler {
	t.Helper()
	h, err := auth.New(auth.Config{
		Identity: f.ids, Issuer: f.iss, Tokens: f.store, Audit: trail, Clients: f.store, RefreshTTL: time.Hour,
		ByClient:  auth.NewMemoryLimiter(100, time.Minute, 100),
		ByAddress: auth.NewMemoryLimiter(100, time.Minute, 100),
		Log:       zap.NewNop(), Metrics: prometheus.NewRegistry(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestLoginRefusalAudited: a refused login is recorded in the known
// client's trail, or the installation's for an unknown client id, with
// nothing of the credentials; when it cannot be recorded the login fails
// (500) instead of being answered.
func TestLoginRefusalAudited(t *testing.T) {
	f := newFixture(t)
	c, err := f.ids.CreateClient(t.Context(), audittest.Operator, "wa", identity.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	login := http.HandlerFunc(f.handler.Login)
	unknown := uuid.NewString()
	for _, body := range []string{
		`{"client_id":"` + c.ClientID + `","client_secret":"wrong-secret-1"}`,
		`{"client_id":"` + unknown + `","client_secret":"wrong-secret-2"}`,
		`{"client_id":"wrong-secret-3","client_secret":"wrong-secret-4"}`,
	} {
		if w := f.post(t, login, body); w.Code != 401 {
			t.Fatalf("refused login: %d %s", w.Code, w.Body)
		}
	}
	wa, err := f.store.ListAudit(t.Context(), store.AuditFilter{Workspace: "wa", Agent: c.ClientID})
	if err != nil {
		t.Fatal(err)
	}
	inst, err := f.store.ListAudit(t.Context(), store.AuditFilter{Workspace: ""})
	if err != nil {
		t.Fatal(err)
	}
	if len(wa) != 1 || wa[0].Action != audit.LoginFailed || wa[0].Outcome != audit.Denied || wa[0].Client != c.ClientID {
		t.Fatalf("trail of wa = %+v", wa)
	}
	if len(inst) != 2 || inst[0].Client != "" || inst[1].Client != "" || inst[0].Action != audit.LoginFailed {
		t.Fatalf("installation's trail = %+v", inst)
	}
	for _, r := range append(wa, inst...) {
		if body := string(r.Canonical()); strings.Contains(body, "wrong-secret") || strings.Contains(body, unknown) {
			t.Fatalf("record %s holds what the client sent", body)
		}
	}

	// The same refusal, unrecordable: no answer but a failure.
	h := newHandler(t, f, unauditedStore{f.store})
	if w := f.post(t, http.HandlerFunc(h.Login), `{"client_id":"`+c.ClientID+`","client_secret":"wrong-secret-1"}`); w.Code != 500 {
		t.Fatalf("unaudited refusal: %d %s", w.Code, w.Body)
	}
}
