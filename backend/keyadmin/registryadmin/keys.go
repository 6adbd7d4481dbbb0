package registryadmin

import (
	"context"
	"errors"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// AddKey adds an active key for client to the file and returns it, its
// secret shown this once. The client need not be the database's: the
// registry may serve clients of another installation.
func (s *Service) AddKey(ctx context.Context, client string, r adminapi.AddKeyRequest) (adminapi.IssuedKey, error) {
	var k clientkey.Key
	err := s.update(ctx, audit.KeyAdd, func(f *registryfile.File) (change, error) {
		added, err := f.Add(client, r.Kid, r.Secret, r.Enc, r.RequireFresh, s.now())
		if k = added.Key; err != nil {
			k.Kid = r.Kid
			return change{}, err
		}
		return change{kid: k.Kid, client: client}, keyadmin.Invalid(k.Validate())
	})
	if err != nil {
		return adminapi.IssuedKey{}, refusal(err, client, k.Kid)
	}
	return adminapi.Issued(k), nil
}

// RotateKey gives client a new active key in the file and moves its
// active keys to retiring, or says what that would do (r.DryRun): the new
// key is of the kind of the key it replaces unless r names another, and a
// weaker one is refused unless r.AllowWeaker (clientkey.NextKind,
// clientkey.Rotate).
func (s *Service) RotateKey(ctx context.Context, client string, r adminapi.RotateKeyRequest) (adminapi.Rotation, error) {
	var rot adminapi.Rotation
	err := s.update(ctx, audit.KeyRotate, func(f *registryfile.File) (change, error) {
		k, done, err := f.Rotate(client, r.Enc, r.RequireFresh, r.AllowWeaker, s.now())
		if err != nil {
			return change{}, err
		}
		retiring := make([]string, 0, len(done.Changed))
		for _, c := range done.Changed {
			retiring = append(retiring, c.Kid)
		}
		rot = adminapi.Rotated(k.Key, retiring, done.Lost, r.DryRun)
		if r.DryRun {
			return change{}, errDryRun
		}
		return change{kid: k.Kid, client: client, replaced: rot.Retiring, weakened: rot.Weakened}, nil
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return adminapi.Rotation{}, refusal(err, client, "")
	}
	return rot, nil
}

// RetireKey retires the key kid in the file: requests encrypted with it
// are refused from then on. The retirement of a client's last active key
// is refused unless r.Force (clientkey.CheckRetire); r.DryRun says what
// the retirement would do.
func (s *Service) RetireKey(ctx context.Context, kid string, r adminapi.RetireKeyRequest) (adminapi.Retirement, error) {
	ret := adminapi.Retirement{DryRun: r.DryRun}
	err := s.update(ctx, audit.KeyRetire, func(f *registryfile.File) (change, error) {
		before, _ := listed(f, kid)
		if err := f.Retire(kid, r.Force, s.now()); err != nil {
			return change{}, err
		}
		ret.Key, _ = listed(f, kid)
		ret.Changed = before.Status != clientkey.Retired
		if r.DryRun {
			return change{}, errDryRun
		}
		return change{kid: kid, client: ret.Key.ClientID}, nil
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return adminapi.Retirement{}, refusal(err, ret.Key.ClientID, kid)
	}
	return ret, nil
}

// listed returns the key kid of f without its secret, and whether f has
// it.
func listed(f *registryfile.File, kid string) (clientkey.Listed, bool) {
	for _, k := range f.Keys {
		if k.Kid == kid {
			return k.Listed(), true
		}
	}
	return clientkey.Listed{}, false
}

// refusal answers err, a refusal of the file's edits or of the rules, as
// the key administration of the database answers its own
// (keyadmin.Problem), saying it of client and kid.
func refusal(err error, client, kid string) error {
	switch {
	case errors.Is(err, registryfile.ErrKidTaken):
		err = keyadmin.ErrKidTaken
	case errors.Is(err, registryfile.ErrNoKey):
		err = keyadmin.ErrNoKey
	case errors.Is(err, clientkey.ErrNoKeys):
		err = keyadmin.ErrNoKeys
	case errors.Is(err, clientkey.ErrStaleGCM):
		err = keyadmin.Invalid(err)
	}
	return keyadmin.Problem(err, client, kid)
}
