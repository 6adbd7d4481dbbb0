package adminapi

import (
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Workspace is a tenant as the API shows one.
type Workspace struct {
	ID        string    `json:"workspace_id"`
	CreatedAt time.Time `json:"created_at"`
}

// Client is a client as the API lists it, without its secret: with its
// display name and labels when it has them.
type Client struct {
	ClientID    string            `json:"client_id"`
	WorkspaceID string            `json:"workspace_id"`
	Status      string            `json:"status"`
	CreatedAt   time.Time         `json:"created_at"`
	Name        string            `json:"name,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
}

// DisplayName is how a person reads c: its name, or its id when it has
// none.
func (c Client) DisplayName() string {
	if c.Name != "" {
		return c.Name
	}
	return c.ClientID
}

// Credentials are a new client's: its id, its secret (shown this once)
// and its workspace.
type Credentials struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	WorkspaceID  string `json:"workspace_id"`
}

// CreateClientRequest is the body of POST /admin/v1/clients: the
// client's workspace, and optionally its display name and labels.
type CreateClientRequest struct {
	WorkspaceID string            `json:"workspace_id"`
	Name        string            `json:"name,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
}

// UpdateClientRequest is the body of PATCH /admin/v1/clients/{id}: the
// client's new name when Name is not nil ("" removes it), labels to add
// or change, and the keys of labels to remove.
type UpdateClientRequest struct {
	Name         *string           `json:"name,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	RemoveLabels []string          `json:"remove_labels,omitempty"`
}

// ClientStatuses are the statuses of a client.
var ClientStatuses = []string{"active", "disabled"}

// ClientQuery selects clients: of a workspace, of a status, whose name
// starts with a prefix (letter case aside), that have labels
// ("key=value", every one), a page at a time in creation order, or in
// name order with a name prefix.
type ClientQuery struct {
	Workspace  string
	Status     string
	NamePrefix string
	Labels     []string
	Cursor     string
	Limit      int
}

// ParseClientQuery reads a ClientQuery from the query of GET
// /admin/v1/clients: workspace, status (active, disabled), name_prefix,
// label (key=value, repeated for more), cursor, limit.
func ParseClientQuery(q url.Values) (ClientQuery, error) {
	labels := q["label"]
	q = maps.Clone(q)
	delete(q, "label")
	v, err := params(q, "workspace", "status", "name_prefix", "cursor", "limit")
	if err != nil {
		return ClientQuery{}, err
	}
	cq := ClientQuery{Workspace: v["workspace"], Status: v["status"], NamePrefix: v["name_prefix"], Labels: labels, Cursor: v["cursor"]}
	if err := cq.Check(); err != nil {
		return cq, err
	}
	cq.Limit, err = limitOf(v["limit"])
	return cq, err
}

// Check refuses a filter no client can match (a workspace that is not a
// workspace id, a status that is not one, a name prefix or a label that
// no name or label has) and a page size out of bounds.
func (q ClientQuery) Check() error {
	switch {
	case q.Workspace != "" && !contract.ValidID(q.Workspace):
		return invalid("workspace is not a workspace id")
	case q.Status != "" && !slices.Contains(ClientStatuses, q.Status):
		return invalid("status must be active or disabled")
	}
	if err := CheckNamePrefix(q.NamePrefix); err != nil {
		return err
	}
	if len(q.Labels) > contract.MaxLabels {
		return problem.New(400, problem.CodeInvalidLabel, "at most "+strconv.Itoa(contract.MaxLabels)+" labels select clients")
	}
	for _, l := range q.Labels {
		if _, _, err := contract.ParseLabel(l); err != nil {
			return problem.New(400, problem.CodeInvalidLabel, "label: "+err.Error())
		}
	}
	return checkLimit(q.Limit)
}

// CheckNamePrefix refuses a name prefix that no name starts with: longer
// than a name, not UTF-8, or holding a control character. "" selects
// every name.
func CheckNamePrefix(p string) error {
	if p == "" {
		return nil
	}
	if !utf8.ValidString(p) || utf8.RuneCountInString(p) > contract.MaxClientName || strings.IndexFunc(p, unicode.IsControl) >= 0 {
		return problem.New(400, problem.CodeInvalidName, "name_prefix must be at most "+strconv.Itoa(contract.MaxClientName)+
			" characters of UTF-8 without control characters")
	}
	return nil
}

// Values returns q as query parameters, ParseClientQuery's inverse.
func (q ClientQuery) Values() url.Values {
	v := values("workspace", q.Workspace, "status", q.Status, "name_prefix", q.NamePrefix, "cursor", q.Cursor, "limit", limitValue(q.Limit))
	for _, l := range q.Labels {
		v.Add("label", l)
	}
	return v
}
