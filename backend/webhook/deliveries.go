package webhook

import (
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// DeliveryHandler serves a subscription's delivery log and redelivery, in
// the caller's workspace only: another workspace's subscription or
// delivery is not found, as a missing one.
type DeliveryHandler struct {
	log *Log
	out *zap.Logger

	list, get, redeliver, recover http.Handler

	// Due is told when a redelivery or a recovery made deliveries due.
	Due Wake
}

// NewDeliveryHandler returns a DeliveryHandler reading and redelivering
// through l; redelivery keeps its Idempotency-Key answers in idem and is
// rate limited per client.
func NewDeliveryHandler(l store.DeliveryLog, idem store.Idempotency, log *zap.Logger) *DeliveryHandler {
	h := &DeliveryHandler{log: NewLog(l), out: log}
	problems := &web.Problems{
		Known: web.ErrorMap{
			{Err: store.ErrNotFound, Problem: web.NotFound()},
			{Err: store.ErrConflict, Problem: problem.New(http.StatusConflict, problem.CodeConflict,
				"the subscription is disabled: nothing is sent to it")},
		},
		Log: log,
	}
	limits := newClientLimits(RedeliverEvery, RedeliverBurst)
	once := web.Idempotent{Store: idem, Problems: problems, Owner: clientOwner}
	h.list = problems.Handler("deliveries", h.serveList)
	h.get = problems.Handler("delivery", h.serveGet)
	h.redeliver = limits.limit(once.Wrap(problems.Handler("redeliver", h.serveRedeliver)))
	h.recover = limits.limit(once.Wrap(problems.Handler("recover", h.serveRecover)))
	return h
}

// clientOwner names the client calling as the owner of its
// Idempotency-Keys, in the workspace it acts in.
func clientOwner(r *http.Request) string {
	c, _ := web.CallerFrom(r.Context())
	return "client:" + c.ClientID + "@" + c.WorkspaceID
}

// List serves GET …/subscriptions/{id}/deliveries.
func (h *DeliveryHandler) List(w http.ResponseWriter, r *http.Request) { h.list.ServeHTTP(w, r) }

// Get serves GET …/subscriptions/{id}/deliveries/{delivery_id}.
func (h *DeliveryHandler) Get(w http.ResponseWriter, r *http.Request) { h.get.ServeHTTP(w, r) }

// Redeliver serves POST …/subscriptions/{id}/deliveries/{delivery_id}/redeliver.
func (h *DeliveryHandler) Redeliver(w http.ResponseWriter, r *http.Request) {
	h.redeliver.ServeHTTP(w, r)
}

// Recover serves POST …/subscriptions/{id}/recover.
func (h *DeliveryHandler) Recover(w http.ResponseWriter, r *http.Request) { h.recover.ServeHTTP(w, r) }

func (h *DeliveryHandler) serveList(w http.ResponseWriter, r *http.Request) error {
	caller, _ := web.CallerFrom(r.Context())
	f, err := ParseDeliveryQuery(r.URL.Query())
	if err != nil {
		return web.BadRequest(err.Error())
	}
	f.WorkspaceID, f.SubscriptionID = caller.WorkspaceID, r.PathValue("id")
	p, err := h.log.List(r.Context(), f)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, p)
	return nil
}

func (h *DeliveryHandler) serveGet(w http.ResponseWriter, r *http.Request) error {
	caller, _ := web.CallerFrom(r.Context())
	d, err := h.log.Get(r.Context(), caller.WorkspaceID, r.PathValue("id"), r.PathValue("delivery_id"))
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, d)
	return nil
}

func (h *DeliveryHandler) serveRedeliver(w http.ResponseWriter, r *http.Request) error {
	caller, _ := web.CallerFrom(r.Context())
	id := r.PathValue("id")
	d, err := h.log.Redeliver(r.Context(), caller.WorkspaceID, id, r.PathValue("delivery_id"), web.AuditEvent(r))
	if err != nil {
		return err
	}
	h.Due.due()
	telemetry.Logger(r.Context(), h.out).Info("delivery redelivered", zap.String("workspace_id", caller.WorkspaceID),
		zap.String("subscription_id", id), zap.String("delivery_id", d.ID))
	web.WriteJSON(w, http.StatusAccepted, d)
	return nil
}

// RecoverRequest is the body of POST …/subscriptions/{id}/recover.
type RecoverRequest struct {
	Since string `json:"since"`
}

// SinceTime is r's since, an RFC 3339 time.
func (r RecoverRequest) SinceTime() (time.Time, error) { return parseTime("since", r.Since) }

// Recovered is the answer of a recovery.
type Recovered struct {
	Recovered int `json:"recovered"`
}

func (h *DeliveryHandler) serveRecover(w http.ResponseWriter, r *http.Request) error {
	caller, _ := web.CallerFrom(r.Context())
	var req RecoverRequest
	if p := web.DecodeRequest(w, r, &req); p != nil {
		return p
	}
	since, err := req.SinceTime()
	if err != nil {
		return web.BadRequest(err.Error())
	}
	id := r.PathValue("id")
	n, err := h.log.Recover(r.Context(), caller.WorkspaceID, id, since, web.AuditEvent(r))
	if err != nil {
		return err
	}
	h.Due.due()
	telemetry.Logger(r.Context(), h.out).Info("deliveries recovered", zap.String("workspace_id", caller.WorkspaceID),
		zap.String("subscription_id", id), zap.Int("deliveries", n.Recovered))
	web.WriteJSON(w, http.StatusAccepted, n)
	return nil
}
