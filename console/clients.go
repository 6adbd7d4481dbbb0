package console

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// pageSize is the rows of a list page.
const pageSize = 50

// clientsView is a page of clients, the filter that selected them, and the
// link to the next page.
type clientsView struct {
	Workspace, Status, NamePrefix, Labels string
	Clients                               []adminapi.Client
	Next                                  string
}

// clientsPage lists the clients a page at a time, of a workspace and a
// status, whose name starts with a prefix (then in name order), that have
// labels; a client id sends to that client's page.
func (s *Server) clientsPage(r *http.Request) (view, error) {
	q := r.URL.Query()
	if id := q.Get("id"); id != "" {
		return view{Redirect: "/clients/" + url.PathEscape(id)}, nil
	}
	cq := adminapi.ClientQuery{Workspace: q.Get("workspace"), Status: q.Get("status"), NamePrefix: q.Get("name_prefix"),
		Labels: strings.Fields(q.Get("labels")), Cursor: q.Get("cursor"), Limit: pageSize}
	p, err := s.api.ListClients(r.Context(), cq)
	if err != nil {
		return view{}, err
	}
	cv := clientsView{Workspace: cq.Workspace, Status: cq.Status, NamePrefix: cq.NamePrefix, Labels: q.Get("labels"), Clients: p.Items}
	if p.Next != "" {
		cv.Next = "/clients?" + pageLink(q, p.Next)
	}
	return view{Template: "clients", Title: "Clients", Nav: "clients", Data: cv}, nil
}

// pageLink returns q's query with the cursor of the next page.
func pageLink(q url.Values, next string) string {
	out := url.Values{}
	for k, v := range q {
		out[k] = v
	}
	out.Set("cursor", next)
	return out.Encode()
}

// clientView is a client's page: the client, its keys, its sharing
// grants.
type clientView struct {
	Client   adminapi.Client
	Keys     []adminapi.KeyInfo
	KeysNext string // the link to the next page of keys
	Grants   []adminapi.Grant
	// Limits are the client's overrides of the edges' default limits,
	// by class in the documents' order.
	Limits []classLimit
	// UploadBytesPerDay is its daily upload quota, 0 for the default's.
	UploadBytesPerDay int64
}

// classLimit is a route class's rate as a client's page shows it.
type classLimit struct {
	Class contract.RouteClass
	Rate  contract.Rate
}

// keysPage is the keys a client's page shows at a time: the API's
// default page.
const keysPage = adminapi.DefaultLimit

// clientPage shows a client with a page of its keys (their last use at any
// edge; the query's keys is the page's cursor) and its sharing grants.
func (s *Server) clientPage(r *http.Request) (view, error) {
	id := r.PathValue("id")
	c, err := s.api.GetClient(r.Context(), id)
	if err != nil {
		return view{}, err
	}
	keys, err := s.api.ListKeys(r.Context(), adminapi.KeyQuery{Client: id, Cursor: r.URL.Query().Get("keys"), Limit: keysPage})
	if err != nil {
		return view{}, err
	}
	grants, err := s.api.ListGrants(r.Context(), adminapi.GrantQuery{Client: id, Limit: adminapi.MaxLimit})
	if err != nil {
		return view{}, err
	}
	limits, err := s.api.ClientLimits(r.Context(), id)
	if err != nil {
		return view{}, err
	}
	cv := clientView{Client: c, Keys: keys.Items, Grants: grants.Items, UploadBytesPerDay: limits.Limits.UploadBytesPerDay}
	for _, class := range contract.RouteClasses {
		if rate, ok := limits.Limits.Rates[class]; ok {
			cv.Limits = append(cv.Limits, classLimit{Class: class, Rate: rate})
		}
	}
	if keys.Next != "" {
		cv.KeysNext = "/clients/" + url.PathEscape(id) + "?" + url.Values{"keys": {keys.Next}}.Encode()
	}
	return view{Template: "client", Title: "Client " + c.DisplayName(), Nav: "clients", Data: cv}, nil
}

// createClient creates a client in the form's workspace, with its name and
// labels, and shows its secret once.
func (s *Server) createClient(r *http.Request) (view, error) {
	ws := r.PostFormValue("workspace")
	if ws == "" {
		return view{}, invalid("Name the workspace of the new client.")
	}
	labels, err := labelsForm(r.PostFormValue("labels"))
	if err != nil {
		return view{}, err
	}
	cred, err := s.api.CreateClient(r.Context(), adminapi.CreateClientRequest{WorkspaceID: ws, Name: r.PostFormValue("name"), Labels: labels})
	if err != nil {
		return view{}, err
	}
	return view{Template: "secret", Title: "Client created", Nav: "clients", Data: secretView{Credentials: &cred}}, nil
}

// disableClient disables the client of the path.
func (s *Server) disableClient(r *http.Request) (view, error) {
	c, err := s.api.DisableClient(r.Context(), r.PathValue("id"))
	if err != nil {
		return view{}, err
	}
	return view{Redirect: "/clients/" + url.PathEscape(c.ClientID)}, nil
}

// updateClient makes the form's name and labels the client's: a label the
// client has that the form does not is removed.
func (s *Server) updateClient(r *http.Request) (view, error) {
	id := r.PathValue("id")
	labels, err := labelsForm(r.PostFormValue("labels"))
	if err != nil {
		return view{}, err
	}
	c, err := s.api.GetClient(r.Context(), id)
	if err != nil {
		return view{}, err
	}
	name := r.PostFormValue("name")
	u := adminapi.UpdateClientRequest{Name: &name, Labels: labels}
	for _, k := range slices.Sorted(maps.Keys(c.Labels)) {
		if _, kept := labels[k]; !kept {
			u.RemoveLabels = append(u.RemoveLabels, k)
		}
	}
	if _, err := s.api.UpdateClient(r.Context(), id, u); err != nil {
		return view{}, err
	}
	return view{Redirect: "/clients/" + url.PathEscape(id)}, nil
}

// labelsForm reads a form's labels: key=value, a space between.
func labelsForm(text string) (map[string]string, error) {
	labels := map[string]string{}
	for _, l := range strings.Fields(text) {
		k, v, err := contract.ParseLabel(l)
		if err != nil {
			return nil, problem.New(http.StatusBadRequest, problem.CodeInvalidLabel, "Labels: "+err.Error()+".")
		}
		if _, dup := labels[k]; dup {
			return nil, problem.New(http.StatusBadRequest, problem.CodeInvalidLabel, "Labels: the key "+k+" is given twice.")
		}
		labels[k] = v
	}
	return labels, nil
}
