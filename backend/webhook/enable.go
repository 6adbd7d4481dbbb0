package webhook

import (
	"context"
	"errors"
	"net/http"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/strictjson"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// Patch is the body of PATCH …/subscriptions/{id}: the only member is
// enabled, which is required.
type Patch struct {
	Enabled *bool `json:"enabled"`
}

// errNoEnabled refuses a PATCH that does not say enabled.
var errNoEnabled = errors.New(`enabled is required: {"enabled": true} turns the subscription on, {"enabled": false} off`)

// ParsePatch reads a PATCH body: strict JSON, {"enabled": true|false} and
// nothing else.
func ParsePatch(body []byte) (bool, error) {
	var p Patch
	if err := strictjson.Unmarshal(body, &p); err != nil {
		return false, err
	}
	if p.Enabled == nil {
		return false, errNoEnabled
	}
	return *p.Enabled, nil
}

// SetEnabled turns workspaceID's subscription id on or off as its client
// chose and records e (the caller's event) as audit.SubscriptionEnable or
// audit.SubscriptionDisable. Turned on, its kept pending deliveries go
// out at once; turned off, it is disabled with the reason "client" and
// its pending deliveries are kept. store.ErrNotFound when the workspace
// has no such subscription.
func (s *Service) SetEnabled(ctx context.Context, workspaceID, id string, enabled bool, e audit.Event) (store.Subscription, error) {
	action := audit.SubscriptionDisable
	if enabled {
		action = audit.SubscriptionEnable
	}
	e = SubscriptionEvent(e, action, id, s.now())
	return s.store.SetSubscriptionEnabled(ctx, workspaceID, id, store.Enablement{Enabled: enabled, At: e.At, Event: e})
}

// Patch serves PATCH /notification/v1/connect/webhook/subscriptions/{id}.
func (h *Handler) Patch(w http.ResponseWriter, r *http.Request) { h.patch.ServeHTTP(w, r) }

func (h *Handler) servePatch(w http.ResponseWriter, r *http.Request) error {
	caller, _ := web.CallerFrom(r.Context())
	body, p := web.ReadJSON(w, r)
	if p != nil {
		return p
	}
	enabled, err := ParsePatch(body)
	if err != nil {
		return web.DecodeProblem(err)
	}
	id := r.PathValue("id")
	sub, err := h.svc.SetEnabled(r.Context(), caller.WorkspaceID, id, enabled, web.AuditEvent(r))
	if err != nil {
		return err
	}
	if enabled {
		h.due()
	}
	telemetry.Logger(r.Context(), h.log).Info("subscription enabled or disabled by its client", zap.String("workspace_id", caller.WorkspaceID),
		zap.String("subscription_id", id), zap.Bool("enabled", enabled))
	web.WriteJSON(w, http.StatusOK, SummaryOf(sub))
	return nil
}
