package adminapi

import (
	"net/url"
	"slices"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
)

// Grant is a sharing grant as the API lists it, without its key: the
// workspace a client may act in, and when it was made and revoked (absent
// while in force).
type Grant struct {
	GrantID     string    `json:"grant_id"`
	WorkspaceID string    `json:"workspace_id"`
	ClientID    string    `json:"client_id"`
	CreatedAt   time.Time `json:"created_at"`
	RevokedAt   time.Time `json:"revoked_at,omitzero"`
}

// IssuedGrant is a new sharing grant with its key, shown this once.
type IssuedGrant struct {
	GrantID     string `json:"grant_id"`
	SharingKey  string `json:"sharing_key"`
	WorkspaceID string `json:"workspace_id"`
	ClientID    string `json:"client_id"`
}

// CreateGrantRequest is the body of POST /admin/v1/grants.
type CreateGrantRequest struct {
	WorkspaceID string `json:"workspace_id"`
	ClientID    string `json:"client_id"`
}

// GrantStatuses are the statuses of a sharing grant.
var GrantStatuses = []string{"active", "revoked"}

// GrantQuery selects sharing grants: of a workspace, of a client, of a
// status, a page at a time in creation order.
type GrantQuery struct {
	Workspace string
	Client    string
	Status    string
	Cursor    string
	Limit     int
}

// ParseGrantQuery reads a GrantQuery from the query of GET
// /admin/v1/grants: workspace, client, status (active, revoked), cursor,
// limit.
func ParseGrantQuery(q url.Values) (GrantQuery, error) {
	v, err := params(q, "workspace", "client", "status", "cursor", "limit")
	if err != nil {
		return GrantQuery{}, err
	}
	gq := GrantQuery{Workspace: v["workspace"], Client: v["client"], Status: v["status"], Cursor: v["cursor"]}
	if err := gq.Check(); err != nil {
		return gq, err
	}
	gq.Limit, err = limitOf(v["limit"])
	return gq, err
}

// Check refuses a query the list does not take, from the API or the
// command line alike.
func (q GrantQuery) Check() error {
	switch {
	case q.Workspace != "" && !contract.ValidID(q.Workspace):
		return invalid("workspace is not a workspace id")
	case q.Client != "" && !contract.ValidID(q.Client):
		return invalid("client is not a client id")
	case q.Status != "" && !slices.Contains(GrantStatuses, q.Status):
		return invalid("status must be active or revoked")
	}
	return checkLimit(q.Limit)
}

// Values returns q as query parameters, ParseGrantQuery's inverse.
func (q GrantQuery) Values() url.Values {
	return values("workspace", q.Workspace, "client", q.Client, "status", q.Status, "cursor", q.Cursor, "limit", limitValue(q.Limit))
}
