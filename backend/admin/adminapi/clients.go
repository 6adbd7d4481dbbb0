package adminapi

import (
	"net/url"
	"slices"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
)

// Workspace is a tenant as the API shows one.
type Workspace struct {
	ID        string    `json:"workspace_id"`
	CreatedAt time.Time `json:"created_at"`
}

// Client is a client as the API lists it, without its secret.
type Client struct {
	ClientID    string    `json:"client_id"`
	WorkspaceID string    `json:"workspace_id"`
	Status      string    `json:"status"`
	CreatedAt   time.Time `json:"created_at"`
}

// Credentials are a new client's: its id, its secret (shown this once)
// and its workspace.
type Credentials struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	WorkspaceID  string `json:"workspace_id"`
}

// CreateClientRequest is the body of POST /admin/v1/clients.
type CreateClientRequest struct {
	WorkspaceID string `json:"workspace_id"`
}

// ClientStatuses are the statuses of a client.
var ClientStatuses = []string{"active", "disabled"}

// ClientQuery selects clients: of a workspace, of a status, a page at a
// time in creation order.
type ClientQuery struct {
	Workspace string
	Status    string
	Cursor    string
	Limit     int
}

// ParseClientQuery reads a ClientQuery from the query of GET
// /admin/v1/clients: workspace, status (active, disabled), cursor, limit.
func ParseClientQuery(q url.Values) (ClientQuery, error) {
	v, err := params(q, "workspace", "status", "cursor", "limit")
	if err != nil {
		return ClientQuery{}, err
	}
	cq := ClientQuery{Workspace: v["workspace"], Status: v["status"], Cursor: v["cursor"]}
	if err := cq.Check(); err != nil {
		return cq, err
	}
	cq.Limit, err = limitOf(v["limit"])
	return cq, err
}

// Check refuses a filter no client can match (a workspace that is not a
// workspace id, a status that is not one) and a page size out of bounds.
func (q ClientQuery) Check() error {
	switch {
	case q.Workspace != "" && !contract.ValidID(q.Workspace):
		return invalid("workspace is not a workspace id")
	case q.Status != "" && !slices.Contains(ClientStatuses, q.Status):
		return invalid("status must be active or disabled")
	}
	return checkLimit(q.Limit)
}

// Values returns q as query parameters, ParseClientQuery's inverse.
func (q ClientQuery) Values() url.Values {
	return values("workspace", q.Workspace, "status", q.Status, "cursor", q.Cursor, "limit", limitValue(q.Limit))
}
