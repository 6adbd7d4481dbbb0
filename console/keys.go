package console

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/internal/apiclient"
	"github.com/health-data-connect/hdc/internal/clientkey"
)

// secretView is a page that shows a secret once: a new client's
// credentials, or a new key with its JWK as hdc keys add prints it.
type secretView struct {
	Credentials *adminapi.Credentials
	Key         *adminapi.IssuedKey
	Grant       *adminapi.IssuedGrant
	Printed     string // the key as hdc keys add prints it
	Retiring    []string
	// KeyError says why a new client's first key was not made.
	KeyError string
	// File is the credentials file with the secret (the session keeps it
	// for one download, at Download), FileName its name.
	File     []byte
	FileName string
	Download string
	// Shown: the page showed the secret already; it names the result
	// without it.
	Shown bool
}

// withoutSecret returns v as its page shows it after the first view: the
// same result, without its secret.
func withoutSecret(v view) view {
	sv, ok := v.Data.(secretView)
	if !ok {
		return v
	}
	out := secretView{Retiring: sv.Retiring, KeyError: sv.KeyError, Shown: true}
	if c := sv.Credentials; c != nil {
		out.Credentials = &adminapi.Credentials{ClientID: c.ClientID, WorkspaceID: c.WorkspaceID}
	}
	if k := sv.Key; k != nil {
		out.Key = &adminapi.IssuedKey{Kid: k.Kid, ClientID: k.ClientID, Enc: k.Enc, RequireFresh: k.RequireFresh}
	}
	if g := sv.Grant; g != nil {
		out.Grant = &adminapi.IssuedGrant{GrantID: g.GrantID, WorkspaceID: g.WorkspaceID, ClientID: g.ClientID}
	}
	v.Data = out
	return v
}

// issuedView returns the page of a new key, with the credentials file
// that hands it over.
func (s *Server) issuedView(k adminapi.IssuedKey, retiring []string) view {
	key := k.Key()
	return view{Template: "secret", Title: "New key " + k.Kid, Nav: "clients",
		Data: secretView{Key: &k, Printed: printed(k), Retiring: retiring,
			File: s.credentialsFile(k.ClientID, apiclient.Handover{Key: &key}), FileName: credentialsName(k.ClientID)}}
}

// printed is k as hdc keys add prints it.
func printed(k adminapi.IssuedKey) string {
	b, _ := json.MarshalIndent(k, "", "  ") // strings, a bool and a JWK of strings: it cannot fail
	return string(b)
}

// credentialsName is the name of client's credentials file.
func credentialsName(client string) string { return "hdc-credentials-" + fileSafe(client) + ".json" }

// fileSafe is s with what a file name, or its quoted header, should not
// hold replaced by '_'.
func fileSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}

// keyRequest reads the form's kind of key: enc (empty for the default)
// and require_fresh.
func keyRequest(r *http.Request) (enc string, fresh bool, err error) {
	enc = r.PostFormValue("enc") // the API checks it
	switch r.PostFormValue("require_fresh") {
	case "", "off":
	case "on":
		fresh = true
	default:
		return "", false, invalid("require_fresh must be on or off.")
	}
	return enc, fresh, nil
}

// addKey adds a key for the client of the path and shows its secret once.
func (s *Server) addKey(r *http.Request) (view, error) {
	enc, fresh, err := keyRequest(r)
	if err != nil {
		return view{}, err
	}
	k, err := s.api.AddKey(r.Context(), r.PathValue("id"), adminapi.AddKeyRequest{Kid: r.PostFormValue("kid"), Enc: enc, RequireFresh: fresh})
	if err != nil {
		return view{}, err
	}
	return s.issuedView(k, nil), nil
}

// rotateKey gives the client of the path a new key, its active keys moved
// to retiring, and shows the new secret once.
func (s *Server) rotateKey(r *http.Request) (view, error) {
	enc, fresh, err := keyRequest(r)
	if err != nil {
		return view{}, err
	}
	req := adminapi.RotateKeyRequest{Enc: enc}
	if fresh { // else as the client's keys
		req.RequireFresh = &fresh
	}
	rot, err := s.api.RotateKey(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return view{}, err
	}
	if rot.Key == nil {
		return view{}, invalid("The API made no key.")
	}
	return s.issuedView(*rot.Key, rot.Retiring), nil
}

// retireKey retires the key of the path, and goes back to its client.
func (s *Server) retireKey(r *http.Request) (view, error) {
	force := r.PostFormValue("force") == "on"
	ret, err := s.api.RetireKey(r.Context(), r.PathValue("kid"), adminapi.RetireKeyRequest{Force: force})
	if err != nil {
		return view{}, err
	}
	return view{Redirect: "/clients/" + url.PathEscape(ret.Key.ClientID)}, nil
}

// keysView is a page of keys, the filter that selected them, and the link
// to the next page.
type keysView struct {
	Client, Workspace, Status string
	Statuses                  []clientkey.Status
	Keys                      []adminapi.KeyInfo
	Next                      string
}

// keysPage lists the clients' keys a page at a time in kid order, of a
// client, of a workspace, of a status (GET /admin/v1/keys), each with its
// last use at any edge.
func (s *Server) keysPage(r *http.Request) (view, error) {
	q := r.URL.Query()
	kq := adminapi.KeyQuery{Client: q.Get("client"), Workspace: q.Get("workspace"), Status: clientkey.Status(q.Get("status")),
		Cursor: q.Get("cursor"), Limit: pageSize}
	p, err := s.api.ListKeys(r.Context(), kq)
	if err != nil {
		return view{}, err
	}
	kv := keysView{Client: kq.Client, Workspace: kq.Workspace, Status: string(kq.Status), Keys: p.Items,
		Statuses: []clientkey.Status{clientkey.Active, clientkey.Retiring, clientkey.Retired}}
	if p.Next != "" {
		kv.Next = "/keys?" + pageLink(q, p.Next)
	}
	return view{Template: "keys", Title: "Keys", Nav: "clients", Data: kv}, nil
}
