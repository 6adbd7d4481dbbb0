package console

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/identity"
)

// secretView is a page that shows a secret once: a new client's
// credentials, or a new key with its JWK as hdc keys add prints it.
type secretView struct {
	Credentials *identity.Credentials
	Key         *admin.IssuedKey
	Printed     string // the key as hdc keys add prints it
	Retiring    []string
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
	out := secretView{Retiring: sv.Retiring, Shown: true}
	if c := sv.Credentials; c != nil {
		out.Credentials = &identity.Credentials{ClientID: c.ClientID, WorkspaceID: c.WorkspaceID}
	}
	if k := sv.Key; k != nil {
		out.Key = &admin.IssuedKey{Kid: k.Kid, ClientID: k.ClientID, Enc: k.Enc, RequireFresh: k.RequireFresh}
	}
	v.Data = out
	return v
}

// issuedView returns the page of a new key.
func issuedView(k admin.IssuedKey, retiring []string) (view, error) {
	b, err := json.MarshalIndent(k, "", "  ")
	if err != nil {
		return view{}, err
	}
	return view{Template: "secret", Title: "New key " + k.Kid, Nav: "clients",
		Data: secretView{Key: &k, Printed: string(b), Retiring: retiring}}, nil
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
	k, err := s.api.AddKey(r.Context(), r.PathValue("id"), admin.AddKeyRequest{Kid: r.PostFormValue("kid"), Enc: enc, RequireFresh: fresh})
	if err != nil {
		return view{}, err
	}
	return issuedView(k, nil)
}

// rotateKey gives the client of the path a new key, its active keys moved
// to retiring, and shows the new secret once.
func (s *Server) rotateKey(r *http.Request) (view, error) {
	enc, fresh, err := keyRequest(r)
	if err != nil {
		return view{}, err
	}
	req := admin.RotateKeyRequest{Enc: enc}
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
	return issuedView(*rot.Key, rot.Retiring)
}

// retireKey retires the key of the path, and goes back to its client.
func (s *Server) retireKey(r *http.Request) (view, error) {
	force := r.PostFormValue("force") == "on"
	ret, err := s.api.RetireKey(r.Context(), r.PathValue("kid"), admin.RetireKeyRequest{Force: force})
	if err != nil {
		return view{}, err
	}
	return view{Redirect: "/clients/" + url.PathEscape(ret.Key.ClientID)}, nil
}
