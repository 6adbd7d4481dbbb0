package console

import (
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/admin/adminclient"
	"github.com/health-data-connect/hdc/internal/apiclient"
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
	// Limits are the client's rates by class in the documents' order,
	// each overridden or the edges' default.
	Limits []classLimit
	// UploadBytesPerDay is its daily upload quota, 0 for the default's.
	UploadBytesPerDay int64
	// Overridden: the client has overrides to clear.
	Overridden bool
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
	cv := clientView{Client: c, Keys: keys.Items, Grants: grants.Items, Limits: classLimits(limits.Limits),
		UploadBytesPerDay: limits.Limits.UploadBytesPerDay, Overridden: len(limits.Limits.Rates) > 0 || limits.Limits.UploadBytesPerDay > 0}
	if keys.Next != "" {
		cv.KeysNext = "/clients/" + url.PathEscape(id) + "?" + url.Values{"keys": {keys.Next}}.Encode()
	}
	return view{Template: "client", Title: "Client " + c.DisplayName(), Nav: "clients", Data: cv}, nil
}

// createClient creates a client in the form's workspace, with its name and
// labels, and with a first key of the form's kind unless it names none,
// and shows its secret (and its key's) once, with the credentials file
// that hands both over.
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
	sv := secretView{Credentials: &cred, FileName: credentialsName(cred.ClientID)}
	issued := apiclient.Handover{Secret: cred.ClientSecret, WorkspaceID: cred.WorkspaceID}
	if enc := r.PostFormValue("first_key"); enc != "" {
		// The key is a second change of the form: a key of its own, so
		// that the same form sent again makes it once too. The secret is
		// shown whatever becomes of the key.
		ctx := adminclient.WithIdempotencyKey(r.Context(), r.PostFormValue("once")+".key")
		k, err := s.api.AddKey(ctx, cred.ClientID, adminapi.AddKeyRequest{Enc: enc})
		if err != nil {
			sv.KeyError = errorDetail(err)
		} else {
			key := k.Key()
			sv.Key, sv.Printed, issued.Key = &k, printed(k), &key
		}
	}
	sv.File = s.credentialsFile(cred.ClientID, issued)
	return view{Template: "secret", Title: "Client created", Nav: "clients", Data: sv}, nil
}

// errorDetail is what an error of the API says to a person: a problem's
// detail, or that no backend answered.
func errorDetail(err error) string {
	var p *problem.Problem
	if errors.As(err, &p) {
		return p.Detail
	}
	return "the Admin API did not answer"
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
