package admin

import (
	"context"
	"net/http"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
)

// AddKey adds an active key for client and returns it, its secret shown
// this once.
func (s *Service) AddKey(ctx context.Context, client string, r adminapi.AddKeyRequest) (adminapi.IssuedKey, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return adminapi.IssuedKey{}, err
	}
	k, err := s.keys.Add(ctx, keyadmin.AddRequest{By: by, Client: client, Kid: r.Kid, Secret: r.Secret, Enc: r.Enc, RequireFresh: r.RequireFresh})
	if err != nil {
		return adminapi.IssuedKey{}, keyadmin.Problem(err, client, k.Kid)
	}
	return adminapi.Issued(k), nil
}

// RotateKey gives client a new active key and moves its active keys to
// retiring, or says what that would do (r.DryRun).
func (s *Service) RotateKey(ctx context.Context, client string, r adminapi.RotateKeyRequest) (adminapi.Rotation, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return adminapi.Rotation{}, err
	}
	rot, err := s.keys.Rotate(ctx, keyadmin.RotateRequest{By: by, Client: client, Enc: r.Enc, RequireFresh: r.RequireFresh,
		AllowWeaker: r.AllowWeaker, DryRun: r.DryRun})
	if err != nil {
		return adminapi.Rotation{}, keyadmin.Problem(err, client, "")
	}
	return adminapi.Rotated(rot.Key, rot.Retiring, rot.Lost, rot.DryRun), nil
}

// RetireKey retires the key kid: its requests are refused from then on.
func (s *Service) RetireKey(ctx context.Context, kid string, r adminapi.RetireKeyRequest) (adminapi.Retirement, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return adminapi.Retirement{}, err
	}
	ret, err := s.keys.Retire(ctx, keyadmin.RetireRequest{By: by, Kid: kid, Force: r.Force, DryRun: r.DryRun})
	if err != nil {
		return adminapi.Retirement{}, keyadmin.Problem(err, "", kid)
	}
	return adminapi.Retirement{DryRun: ret.DryRun, Key: ret.Key, Changed: ret.Changed}, nil
}

func (h *Handler) addKey(w http.ResponseWriter, r *http.Request) error {
	return keyChange(w, r, r.PathValue("id"), contract.ValidID, h.svc.AddKey, func(adminapi.IssuedKey) int { return http.StatusCreated })
}

func (h *Handler) rotateKey(w http.ResponseWriter, r *http.Request) error {
	return keyChange(w, r, r.PathValue("id"), contract.ValidID, h.svc.RotateKey, func(rot adminapi.Rotation) int {
		if rot.DryRun {
			return http.StatusOK
		}
		return http.StatusCreated
	})
}

func (h *Handler) retireKey(w http.ResponseWriter, r *http.Request) error {
	return keyChange(w, r, r.PathValue("kid"), clientkey.ValidKid, h.svc.RetireKey, func(adminapi.Retirement) int { return http.StatusOK })
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
