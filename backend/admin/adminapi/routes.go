package adminapi

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/health-data-connect/hdc/internal/contract"
)

// Prefix is the path every route of the Admin API starts with.
const Prefix = "/admin/v1"

// Who may call a route: operators alone (a change), or operators and
// auditors (a read).
var (
	Operators = []contract.Role{contract.RoleOperator}
	Readers   = []contract.Role{contract.RoleOperator, contract.RoleAuditor}
)

// Route is a route of the Admin API: the operation it serves (the name of
// its method of API), its method and path pattern, the roles that may
// call it, and whether it takes an Idempotency-Key.
type Route struct {
	Name, Method, Path string
	Roles              []contract.Role
	Idempotent         bool
}

// route is the row of the operation name: method and path (under
// Prefix), the roles, and whether it takes an Idempotency-Key.
func route(name, method, path string, roles []contract.Role, idempotent bool) Route {
	return Route{Name: name, Method: method, Path: Prefix + path, Roles: roles, Idempotent: idempotent}
}

// routes is the Admin API's route table: a row per operation of API. The
// server binds each to its handler by name, the client builds each
// request from it, and the tests hold the role matrix and
// docs/admin-openapi.yaml to it.
var routes = []Route{
	route("Whoami", "GET", "/whoami", Readers, false),
	route("ListBackends", "GET", "/fleet/backends", Readers, false),
	route("ListEdges", "GET", "/fleet/edges", Readers, false),
	route("FleetStatus", "GET", "/fleet/status", Readers, false),
	route("ListWorkspaces", "GET", "/workspaces", Readers, false),
	route("GetWorkspace", "GET", "/workspaces/{id}", Readers, false),
	route("ListDestinations", "GET", "/workspaces/{id}/webhook-destinations", Readers, false),
	route("GrantDestination", "POST", "/workspaces/{id}/webhook-destinations", Operators, true),
	route("RevokeDestination", "DELETE", "/workspaces/{id}/webhook-destinations/{destination_id}", Operators, true),
	route("ListClients", "GET", "/clients", Readers, false),
	route("CreateClient", "POST", "/clients", Operators, true),
	route("GetClient", "GET", "/clients/{id}", Readers, false),
	route("UpdateClient", "PATCH", "/clients/{id}", Operators, true),
	route("DisableClient", "POST", "/clients/{id}/disable", Operators, true),
	route("ClientLimits", "GET", "/clients/{id}/limits", Readers, false),
	route("SetClientLimits", "PUT", "/clients/{id}/limits", Operators, true),
	route("ClearClientLimits", "DELETE", "/clients/{id}/limits", Operators, true),
	route("ListKeys", "GET", "/keys", Readers, false),
	route("GetKey", "GET", "/keys/{kid}", Readers, false),
	route("RetireKey", "POST", "/keys/{kid}/retire", Operators, true),
	route("AddKey", "POST", "/clients/{id}/keys", Operators, true),
	route("RotateKey", "POST", "/clients/{id}/keys/rotate", Operators, true),
	route("ListRevocations", "GET", "/revocations", Readers, false),
	route("RevokeCertificate", "POST", "/revocations", Operators, true),
	route("ListPeople", "GET", "/people", Readers, false),
	route("ListGrants", "GET", "/grants", Readers, false),
	route("CreateGrant", "POST", "/grants", Operators, true),
	route("GetGrant", "GET", "/grants/{id}", Readers, false),
	route("RevokeGrant", "POST", "/grants/{id}/revoke", Operators, true),
	route("ListSubscriptions", "GET", "/subscriptions", Readers, false),
	route("GetSubscription", "GET", "/subscriptions/{id}", Readers, false),
	route("DeleteSubscription", "DELETE", "/subscriptions/{id}", Operators, true),
	route("EnableSubscription", "POST", "/subscriptions/{id}/enable", Operators, true),
	route("TestSubscription", "POST", "/subscriptions/{id}/test", Operators, true),
	route("ListDeliveries", "GET", "/subscriptions/{id}/deliveries", Readers, false),
	route("GetDelivery", "GET", "/subscriptions/{id}/deliveries/{delivery_id}", Readers, false),
	route("Redeliver", "POST", "/subscriptions/{id}/deliveries/{delivery_id}/redeliver", Operators, true),
	route("RecoverDeliveries", "POST", "/subscriptions/{id}/recover", Operators, true),
	route("SearchAudit", "GET", "/audit-events", Readers, false),
	route("ExportAudit", "GET", "/audit-events/export", Readers, false),
	route("VerifyAudit", "GET", "/audit/verify", Readers, false),
}

// Routes returns the route table, a row per operation.
func Routes() []Route { return slices.Clone(routes) }

// Lookup returns the route of the operation name.
func Lookup(name string) (Route, bool) {
	i := slices.IndexFunc(routes, func(r Route) bool { return r.Name == name })
	if i < 0 {
		return Route{}, false
	}
	return routes[i], true
}

// Pattern is the route as net/http's ServeMux takes it: "GET /admin/v1/…".
func (r Route) Pattern() string { return r.Method + " " + r.Path }

// errParam refuses a path parameter that names no resource: empty, or a
// dot segment, which a server would clean away.
var errParam = errors.New("adminapi: a path parameter is empty, '.' or '..'")

// Expand returns the route's path, escaped, with params in place of its
// wildcards, in order.
func (r Route) Expand(params ...string) (string, error) {
	segs := strings.Split(r.Path, "/")
	n := 0
	for i, s := range segs {
		if !strings.HasPrefix(s, "{") {
			continue
		}
		if n == len(params) {
			return "", fmt.Errorf("adminapi: %s takes more than %d path parameters", r.Name, len(params))
		}
		p := params[n]
		if p == "" || p == "." || p == ".." {
			return "", errParam
		}
		segs[i], n = url.PathEscape(p), n+1
	}
	if n != len(params) {
		return "", fmt.Errorf("adminapi: %s takes %d path parameters, not %d", r.Name, n, len(params))
	}
	return strings.Join(segs, "/"), nil
}
