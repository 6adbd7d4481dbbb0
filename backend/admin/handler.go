package admin

import (
	"net/http"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/problem"
)

// HandlerConfig is what the Handler needs besides the Service.
type HandlerConfig struct {
	// HopTLS: the internal listener requires the hop's client
	// certificates. Without, there is no person, and every route refuses.
	HopTLS bool
	// Idempotency keeps the answers of changes made under a key.
	Idempotency store.Idempotency
	// DenyList, when set, is told of a revocation made here.
	DenyList *DenyList
	Log      *zap.Logger
}

// Handler serves the Admin API's routes.
type Handler struct {
	HandlerConfig
	svc      *Service
	mux      *web.Mux
	problems *web.Problems
}

// NewHandler returns the Handler of svc.
func NewHandler(svc *Service, cfg HandlerConfig) *Handler {
	return &Handler{HandlerConfig: cfg, svc: svc, problems: &web.Problems{Log: cfg.Log, Known: knownErrors}}
}

// knownErrors are the services' errors a caller can correct.
var knownErrors = web.ErrorMap{
	{Err: identity.ErrInvalidID, Problem: problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, identity.ErrInvalidID.Error())},
	{Err: store.ErrNotFound, Problem: problem.New(http.StatusNotFound, problem.CodeNotFound, "no such resource")},
	{Err: identity.ErrOwnWorkspace, Problem: problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, identity.ErrOwnWorkspace.Error())},
	{Err: store.ErrConflict, Problem: problem.New(http.StatusConflict, problem.CodeConflict, "the resource exists already")},
	{Err: store.ErrTooManyLabels, Problem: problem.New(http.StatusBadRequest, problem.CodeInvalidLabel, store.ErrTooManyLabels.Error())},
}

// Register adds every route of the table (adminapi.Routes) to mux with
// its handler, each behind the person check of its roles, the changes that
// take one behind their Idempotency-Key. A route without a handler is a
// mistake of this package's, which its tests catch: Register panics.
func (h *Handler) Register(mux *web.Mux) {
	h.mux = mux
	handlers := h.handlers()
	for _, rt := range adminapi.Routes() {
		fn, ok := handlers[rt.Name]
		if !ok {
			panic("admin: no handler of the operation " + rt.Name)
		}
		next := h.problems.Handler(rt.Name, fn)
		if rt.Idempotent {
			next = h.idempotent(next)
		}
		mux.Handle(rt.Method, rt.Path, h.requirePerson(rt.Roles, next))
	}
}

// handlers are the handlers of the operations, by name.
func (h *Handler) handlers() map[string]web.HandlerFunc {
	return map[string]web.HandlerFunc{
		"Whoami":             h.whoami,
		"ListBackends":       h.listBackends,
		"ListEdges":          h.listEdges,
		"FleetStatus":        h.fleetStatus,
		"ListWorkspaces":     h.listWorkspaces,
		"GetWorkspace":       h.getWorkspace,
		"ListDestinations":   h.listDestinations,
		"GrantDestination":   h.grantDestination,
		"RevokeDestination":  h.revokeDestination,
		"ListClients":        h.listClients,
		"CreateClient":       h.createClient,
		"GetClient":          h.getClient,
		"UpdateClient":       h.updateClient,
		"DisableClient":      h.disableClient,
		"ClientLimits":       h.getClientLimits,
		"SetClientLimits":    h.setClientLimits,
		"ClearClientLimits":  h.clearClientLimits,
		"ListKeys":           h.listKeys,
		"GetKey":             h.getKey,
		"RetireKey":          h.retireKey,
		"AddKey":             h.addKey,
		"RotateKey":          h.rotateKey,
		"ListRevocations":    h.listRevocations,
		"RevokeCertificate":  h.revoke,
		"ListPeople":         h.listPeople,
		"ListGrants":         h.listGrants,
		"CreateGrant":        h.createGrant,
		"GetGrant":           h.getGrant,
		"RevokeGrant":        h.revokeGrant,
		"ListSubscriptions":  h.listSubscriptions,
		"GetSubscription":    h.getSubscription,
		"DeleteSubscription": h.deleteSubscription,
		"EnableSubscription": h.enableSubscription,
		"TestSubscription":   h.testSubscription,
		"ListDeliveries":     h.listDeliveries,
		"GetDelivery":        h.getDelivery,
		"Redeliver":          h.redeliver,
		"RecoverDeliveries":  h.recoverDeliveries,
		"SearchAudit":        h.searchAudit,
		"ExportAudit":        h.exportAudit,
		"VerifyAudit":        h.verifyAudit,
	}
}

func (h *Handler) whoami(w http.ResponseWriter, r *http.Request) error {
	p, err := h.svc.Whoami(r.Context())
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, p)
	return nil
}
