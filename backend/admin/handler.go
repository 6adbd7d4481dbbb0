package admin

import (
	"net/http"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Prefix is the path every route of the Admin API starts with.
const Prefix = "/admin/v1"

// Route is a route of the Admin API: its method and path pattern, the
// roles that may call it, and whether it takes an Idempotency-Key.
type Route struct {
	Method, Path string
	Roles        []contract.Role
	Idempotent   bool
}

// route is a Route and its handler.
type route struct {
	Route
	name string
	fn   web.HandlerFunc
}

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
}

// Register adds every route to mux, each behind the person check of its
// roles, the changes that take one behind their Idempotency-Key.
func (h *Handler) Register(mux *web.Mux) {
	h.mux = mux
	for _, rt := range h.routes() {
		next := h.problems.Handler(rt.name, rt.fn)
		if rt.Idempotent {
			next = h.idempotent(next)
		}
		mux.Handle(rt.Method, rt.Path, h.requirePerson(rt.Roles, next))
	}
}

// Routes returns every route of the Admin API, for the tests that hold
// the role matrix and the OpenAPI document to them.
func Routes() []Route {
	var out []Route
	for _, rt := range (&Handler{}).routes() {
		out = append(out, rt.Route)
	}
	return out
}

// routes is the table of the Admin API.
func (h *Handler) routes() []route {
	r := func(method, path string, roles []contract.Role, idempotent bool, name string, fn web.HandlerFunc) route {
		return route{Route: Route{Method: method, Path: Prefix + path, Roles: roles, Idempotent: idempotent}, name: name, fn: fn}
	}
	return []route{
		r("GET", "/whoami", readers, false, "whoami", h.whoami),
		r("GET", "/fleet/backends", readers, false, "fleet.backends", h.listBackends),
		r("GET", "/fleet/edges", readers, false, "fleet.edges", h.listEdges),
		r("GET", "/fleet/status", readers, false, "fleet.status", h.fleetStatus),
		r("GET", "/workspaces", readers, false, "workspaces.list", h.listWorkspaces),
		r("GET", "/workspaces/{id}", readers, false, "workspaces.get", h.getWorkspace),
		r("GET", "/workspaces/{id}/webhook-destinations", readers, false, "destinations.list", h.listDestinations),
		r("POST", "/workspaces/{id}/webhook-destinations", operators, true, "destinations.grant", h.grantDestination),
		r("DELETE", "/workspaces/{id}/webhook-destinations/{destination_id}", operators, false, "destinations.revoke", h.revokeDestination),
		r("GET", "/clients", readers, false, "clients.list", h.listClients),
		r("POST", "/clients", operators, true, "clients.create", h.createClient),
		r("GET", "/clients/{id}", readers, false, "clients.get", h.getClient),
		r("POST", "/clients/{id}/disable", operators, false, "clients.disable", h.disableClient),
		r("GET", "/clients/{id}/limits", readers, false, "clients.limits.get", h.getClientLimits),
		r("PUT", "/clients/{id}/limits", operators, false, "clients.limits.set", h.setClientLimits),
		r("DELETE", "/clients/{id}/limits", operators, false, "clients.limits.clear", h.clearClientLimits),
		r("GET", "/keys", readers, false, "keys.list", h.listKeys),
		r("GET", "/keys/{kid}", readers, false, "keys.get", h.getKey),
		r("POST", "/keys/{kid}/retire", operators, false, "keys.retire", h.retireKey),
		r("POST", "/clients/{id}/keys", operators, true, "keys.add", h.addKey),
		r("POST", "/clients/{id}/keys/rotate", operators, true, "keys.rotate", h.rotateKey),
		r("GET", "/revocations", readers, false, "revocations.list", h.listRevocations),
		r("POST", "/revocations", operators, false, "revocations.create", h.revoke),
		r("GET", "/grants", readers, false, "grants.list", h.listGrants),
		r("POST", "/grants", operators, true, "grants.create", h.createGrant),
		r("GET", "/grants/{id}", readers, false, "grants.get", h.getGrant),
		r("POST", "/grants/{id}/revoke", operators, false, "grants.revoke", h.revokeGrant),
		r("GET", "/subscriptions", readers, false, "subscriptions.list", h.listSubscriptions),
		r("GET", "/subscriptions/{id}", readers, false, "subscriptions.get", h.getSubscription),
		r("DELETE", "/subscriptions/{id}", operators, false, "subscriptions.delete", h.deleteSubscription),
		r("GET", "/subscriptions/{id}/deliveries", readers, false, "deliveries.list", h.listDeliveries),
		r("GET", "/subscriptions/{id}/deliveries/{delivery_id}", readers, false, "deliveries.get", h.getDelivery),
		r("POST", "/subscriptions/{id}/deliveries/{delivery_id}/redeliver", operators, true, "deliveries.redeliver", h.redeliver),
		r("POST", "/subscriptions/{id}/recover", operators, true, "deliveries.recover", h.recoverDeliveries),
		r("GET", "/audit-events", readers, false, "audit.search", h.searchAudit),
		r("GET", "/audit-events/export", readers, false, "audit.export", h.exportAudit),
		r("GET", "/audit/verify", readers, false, "audit.verify", h.verifyAudit),
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
