package webhook

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// Handler serves the subscription endpoints. Every operation acts in the
// caller's workspace only.
type Handler struct {
	store store.Subscriptions
	svc   *Service
	rules Rules
	max   int
	log   *zap.Logger
	now   func() time.Time

	register, list, delete, patch http.Handler

	// Deliveries serves the subscriptions' delivery logs and redelivery.
	Deliveries *DeliveryHandler
	// Due is told when a subscription is turned back on, its kept
	// deliveries due at once.
	Due Wake
}

// due tells h.Due that deliveries are due.
func (h *Handler) due() { h.Due.due() }

// NewHandler returns a Handler that lets a workspace have at most max
// subscriptions.
func NewHandler(s store.Subscriptions, rules Rules, max int, log *zap.Logger) *Handler {
	h := &Handler{store: s, svc: NewService(s), rules: rules, max: max, log: log, now: time.Now}
	problems := &web.Problems{
		Known: web.ErrorMap{
			{Err: store.ErrNotFound, Problem: web.NotFound()},
			{Err: store.ErrConflict, Problem: problem.New(http.StatusConflict, problem.CodeConflict,
				"the workspace already has a subscription for this endpoint")},
			{Err: store.ErrLimit, Problem: problem.New(http.StatusConflict, problem.CodeSubscriptionLimit,
				fmt.Sprintf("a workspace has at most %d subscriptions; delete one first", max))},
		},
		Log: log,
	}
	h.register = problems.Handler("register", h.serveRegister)
	h.list = problems.Handler("list", h.serveList)
	h.delete = problems.Handler("delete", h.serveDelete)
	h.patch = problems.Handler("patch", h.servePatch)
	return h
}

// Register serves POST /notification/v1/connect/webhook/subscriptions.
func (h *Handler) Register(w http.ResponseWriter, r *http.Request) { h.register.ServeHTTP(w, r) }

// List serves GET /notification/v1/connect/webhook/subscriptions.
func (h *Handler) List(w http.ResponseWriter, r *http.Request) { h.list.ServeHTTP(w, r) }

// Delete serves DELETE /notification/v1/connect/webhook/subscriptions/{id}.
func (h *Handler) Delete(w http.ResponseWriter, r *http.Request) { h.delete.ServeHTTP(w, r) }

// Registered is the answer to a registration.
type Registered struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	// SigningKey is the key generated for a registration that gave none,
	// shown this once; absent when the client gave its own.
	SigningKey string `json:"signing_key,omitempty"`
}

func (h *Handler) serveRegister(w http.ResponseWriter, r *http.Request) error {
	caller, _ := web.CallerFrom(r.Context())
	body, p := web.ReadJSON(w, r)
	if p != nil {
		return p
	}
	spec, err := h.rules.Parse(r.Context(), caller.WorkspaceID, body)
	switch {
	case errors.Is(err, ErrEndpointNotAllowed), errors.Is(err, ErrAWSAccountNotAllowed):
		return problem.New(http.StatusBadRequest, problem.CodeEndpointNotAllowed, err.Error())
	case errors.Is(err, ErrGrantsUnavailable):
		return err
	case err != nil:
		return web.DecodeProblem(err)
	}
	out := Registered{Status: "success"}
	if spec.SigningKey == "" {
		// Every delivery is signed: a client that chose no key is given
		// one, in this answer only.
		spec.SigningKey = GenerateSigningKey()
		out.SigningKey = spec.SigningKey
	}
	sub := store.Subscription{
		ID:             uuid.NewString(),
		WorkspaceID:    caller.WorkspaceID,
		Endpoint:       spec.Endpoint,
		Protocol:       spec.Protocol,
		EventNames:     spec.EventNames,
		SigningKey:     spec.SigningKey,
		DeliveryFormat: spec.DeliveryFormat,
		Status:         store.SubscriptionActive,
		CreatedAt:      h.now(),
	}
	e := web.AuditEvent(r)
	e.At, e.Action, e.Outcome = sub.CreatedAt, audit.SubscriptionCreate, audit.Success
	e.Entity = audit.Entity{Kind: audit.EntitySubscription, ID: sub.ID}
	err = h.store.CreateSubscription(r.Context(), sub, h.max, e)
	if errors.Is(err, store.ErrNotFound) {
		return web.UnknownCaller()
	}
	if err != nil {
		return err
	}
	telemetry.Logger(r.Context(), h.log).Info("subscription created", zap.String("workspace_id", caller.WorkspaceID), zap.String("subscription_id", sub.ID),
		zap.String("protocol", sub.Protocol), zap.Int("events", len(sub.EventNames)), zap.Bool("generated_key", out.SigningKey != ""))
	out.ID = sub.ID
	web.WriteJSON(w, http.StatusOK, out)
	return nil
}

// Summary is a subscription as listed; the signing key is never shown.
type Summary struct {
	ID                  string     `json:"id"`
	Endpoint            string     `json:"endpoint"`
	Protocol            string     `json:"protocol"`
	EventNames          []string   `json:"event_names"`
	Status              string     `json:"status"`
	HasSigningKey       bool       `json:"has_signing_key"`
	DeliveryFormat      string     `json:"delivery_format"`
	CreatedAt           time.Time  `json:"created_at"`
	LastDeliveryAt      *time.Time `json:"last_delivery_at"`
	LastDeliveryOutcome *string    `json:"last_delivery_outcome"`
	// DisabledReason says why a disabled subscription is: gone (410),
	// failing (for the disable period), client (PATCH); null while active.
	DisabledReason *string `json:"disabled_reason"`
}

// List is the answer of GET: the workspace's subscriptions, oldest first.
type List struct {
	Subscriptions []Summary `json:"subscriptions"`
}

func (h *Handler) serveList(w http.ResponseWriter, r *http.Request) error {
	caller, _ := web.CallerFrom(r.Context())
	subs, err := h.store.ListSubscriptions(r.Context(), store.SubscriptionFilter{WorkspaceID: caller.WorkspaceID})
	if err != nil {
		return err
	}
	out := List{Subscriptions: make([]Summary, 0, len(subs))}
	for _, s := range subs {
		out.Subscriptions = append(out.Subscriptions, SummaryOf(s))
	}
	web.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) serveDelete(w http.ResponseWriter, r *http.Request) error {
	caller, _ := web.CallerFrom(r.Context())
	id := r.PathValue("id")
	if err := h.svc.Delete(r.Context(), caller.WorkspaceID, id, web.AuditEvent(r)); err != nil {
		return err
	}
	telemetry.Logger(r.Context(), h.log).Info("subscription deleted", zap.String("workspace_id", caller.WorkspaceID), zap.String("subscription_id", id))
	w.WriteHeader(http.StatusNoContent)
	return nil
}
