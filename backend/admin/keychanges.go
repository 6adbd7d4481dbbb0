package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// IssuedKey is a key as the answer that makes it shows it, its secret
// included: the only time it is shown (hdc keys add and rotate print it).
type IssuedKey struct {
	Kid      string `json:"kid"`
	ClientID string `json:"client_id"`
	Secret   string `json:"secret"`
	Enc      string `json:"enc"`
	// RequireFresh: the key's envelopes must name iat and jti.
	RequireFresh bool `json:"require_fresh,omitempty"`
	// JWK is the key as a JSON Web Key, which the JOSE libraries import
	// as it is (the client-library table of docs/clients.md).
	JWK clientkey.JWK `json:"jwk"`
}

// Issued is k as the answer that makes it shows it.
func Issued(k clientkey.Key) IssuedKey {
	return IssuedKey{Kid: k.Kid, ClientID: k.ClientID, Secret: k.Secret, Enc: k.ContentEncryption(), RequireFresh: k.NeedsFreshness(), JWK: k.JWK()}
}

// Key is the active key k shows, for a client's credentials file.
func (k IssuedKey) Key() clientkey.Key {
	return clientkey.Key{Kid: k.Kid, ClientID: k.ClientID, Secret: k.Secret, Enc: k.Enc, RequireFresh: k.RequireFresh, Status: clientkey.Active}
}

// AddKeyRequest is the body of POST /admin/v1/clients/{id}/keys: the new
// key's kid and secret ("" for random ones), its content encryption (""
// for A128CBC-HS256), and whether its envelopes must name iat and jti
// (always so for A256GCM).
type AddKeyRequest struct {
	Kid          string `json:"kid,omitempty"`
	Secret       string `json:"secret,omitempty"`
	Enc          string `json:"enc,omitempty"`
	RequireFresh bool   `json:"require_fresh,omitempty"`
}

// AddKey adds an active key for client and returns it, its secret shown
// this once.
func (s *Service) AddKey(ctx context.Context, client string, r AddKeyRequest) (IssuedKey, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return IssuedKey{}, err
	}
	k, err := s.keys.Add(ctx, keyadmin.AddRequest{By: by, Client: client, Kid: r.Kid, Secret: r.Secret, Enc: r.Enc, RequireFresh: r.RequireFresh})
	if err != nil {
		return IssuedKey{}, KeyProblem(err, client, k.Kid)
	}
	return Issued(k), nil
}

// RotateKeyRequest is the body of POST /admin/v1/clients/{id}/keys/rotate
// (keyadmin.RotateRequest): the new key's enc and freshness (absent to
// keep the replaced key's), whether it may be weaker than the key it
// replaces, and whether to say what the rotation would do and change
// nothing.
type RotateKeyRequest struct {
	Enc          string `json:"enc,omitempty"`
	RequireFresh *bool  `json:"require_fresh,omitempty"`
	AllowWeaker  bool   `json:"allow_weaker,omitempty"`
	DryRun       bool   `json:"dry_run,omitempty"`
}

// KeyKind is the kind of a key: its content encryption, and whether its
// envelopes must name iat and jti.
type KeyKind struct {
	Enc          string `json:"enc"`
	RequireFresh bool   `json:"require_fresh"`
}

// Rotation is what a rotation did, or in a dry run would do.
type Rotation struct {
	DryRun   bool   `json:"dry_run,omitempty"`
	ClientID string `json:"client_id"`
	// Key is the new active key, its secret shown this once; absent in
	// a dry run.
	Key *IssuedKey `json:"key,omitempty"`
	// NewKey is the new key's kind.
	NewKey KeyKind `json:"new_key"`
	// Retiring are the kids the rotation moved to retiring, still
	// accepted until retired.
	Retiring []string `json:"retiring"`
	// Weakened is what the new key gives up against the key it replaces
	// (enc, freshness), which allow_weaker allowed.
	Weakened []string `json:"weakened,omitempty"`
}

// RotateKey gives client a new active key and moves its active keys to
// retiring, or says what that would do (r.DryRun).
func (s *Service) RotateKey(ctx context.Context, client string, r RotateKeyRequest) (Rotation, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return Rotation{}, err
	}
	rot, err := s.keys.Rotate(ctx, keyadmin.RotateRequest{By: by, Client: client, Enc: r.Enc, RequireFresh: r.RequireFresh,
		AllowWeaker: r.AllowWeaker, DryRun: r.DryRun})
	if err != nil {
		return Rotation{}, KeyProblem(err, client, "")
	}
	out := Rotation{DryRun: rot.DryRun, ClientID: rot.Key.ClientID, NewKey: KeyKind{rot.Key.ContentEncryption(), rot.Key.NeedsFreshness()},
		Retiring: append([]string{}, rot.Retiring...), Weakened: rot.Lost}
	if !rot.DryRun {
		issued := Issued(rot.Key)
		out.Key = &issued
	}
	return out, nil
}

// RetireKeyRequest is the body of POST /admin/v1/keys/{kid}/retire:
// whether to retire a client's last active key (or its last key), which
// is refused otherwise, and whether to say what the retirement would do
// and change nothing.
type RetireKeyRequest struct {
	Force  bool `json:"force,omitempty"`
	DryRun bool `json:"dry_run,omitempty"`
}

// Retirement is what a retirement did, or in a dry run would do.
type Retirement struct {
	DryRun bool `json:"dry_run,omitempty"`
	// Key is the key as retired.
	Key clientkey.Listed `json:"key"`
	// Changed: the key was not retired already. Retiring a retired key
	// changes nothing and answers as the first retirement did.
	Changed bool `json:"changed"`
}

// RetireKey retires the key kid: its requests are refused from then on.
func (s *Service) RetireKey(ctx context.Context, kid string, r RetireKeyRequest) (Retirement, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return Retirement{}, err
	}
	ret, err := s.keys.Retire(ctx, keyadmin.RetireRequest{By: by, Kid: kid, Force: r.Force, DryRun: r.DryRun})
	if err != nil {
		return Retirement{}, KeyProblem(err, "", kid)
	}
	return Retirement{DryRun: ret.DryRun, Key: ret.Key, Changed: ret.Changed}, nil
}

// KeyProblem returns the problem that answers a refusal of the key
// administration (package keyadmin, and the rules of package clientkey),
// saying it of client and kid where it names them; any other error as it
// is. The command line words a registry file's refusals by it too.
func KeyProblem(err error, client, kid string) error {
	var weaker *clientkey.WeakerError
	var lockOut *clientkey.LockOutError
	switch {
	case errors.As(err, &weaker):
		return problem.New(http.StatusConflict, problem.CodeWeakerKey, weaker.Error())
	case errors.As(err, &lockOut):
		return problem.New(http.StatusConflict, problem.CodeLastActiveKey, lockOut.Error())
	case errors.Is(err, keyadmin.ErrInvalidKey):
		return problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, err.Error())
	case errors.Is(err, keyadmin.ErrNoClient):
		return problem.New(http.StatusNotFound, problem.CodeNotFound, fmt.Sprintf("no client %q", client))
	case errors.Is(err, keyadmin.ErrNoKeys):
		return problem.New(http.StatusConflict, problem.CodeNoKeyToRotate, fmt.Sprintf("client %q has no keys: add one", client))
	case errors.Is(err, keyadmin.ErrNoKey):
		return problem.New(http.StatusNotFound, problem.CodeNotFound, fmt.Sprintf("no key with kid %q", kid))
	case errors.Is(err, keyadmin.ErrKidTaken):
		return problem.New(http.StatusConflict, problem.CodeConflict, fmt.Sprintf("kid %q already exists", kid))
	}
	return err
}

func (h *Handler) addKey(w http.ResponseWriter, r *http.Request) error {
	return keyChange(w, r, r.PathValue("id"), contract.ValidID, h.svc.AddKey, func(IssuedKey) int { return http.StatusCreated })
}

func (h *Handler) rotateKey(w http.ResponseWriter, r *http.Request) error {
	return keyChange(w, r, r.PathValue("id"), contract.ValidID, h.svc.RotateKey, func(rot Rotation) int {
		if rot.DryRun {
			return http.StatusOK
		}
		return http.StatusCreated
	})
}

func (h *Handler) retireKey(w http.ResponseWriter, r *http.Request) error {
	return keyChange(w, r, r.PathValue("kid"), clientkey.ValidKid, h.svc.RetireKey, func(Retirement) int { return http.StatusOK })
}

// keyChange answers a change of keys: the id of the path (not found
// unless valid), the JSON body Req, and the change's answer Out, with the
// status statusOf says.
func keyChange[Req, Out any](w http.ResponseWriter, r *http.Request, id string, valid func(string) bool,
	change func(context.Context, string, Req) (Out, error), statusOf func(Out) int) error {
	if !valid(id) {
		return store.ErrNotFound
	}
	var body Req
	if p := web.DecodeRequest(w, r, &body); p != nil {
		return p
	}
	out, err := change(r.Context(), id, body)
	if err != nil {
		return err
	}
	web.WriteJSON(w, statusOf(out), out)
	return nil
}
