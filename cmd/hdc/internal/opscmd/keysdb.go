package opscmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/backend/sealed"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// ImportRegistry stores every key of the registry file at path, opened
// with sealer, in the database st as it is (keyadmin.Service.Import), all
// or none; it returns how many. hdc keys import and hdc up, which moves an
// earlier version's registry into the database, share it.
func ImportRegistry(ctx context.Context, by audit.Person, st *sealed.Store, path string, sealer *registryfile.Sealer) (int, error) {
	r, err := registryfile.Load(path, sealer)
	if err != nil {
		return 0, err
	}
	if bad := r.Unavailable(); len(bad) > 0 {
		return 0, fmt.Errorf("the secrets of %d keys do not open (%q…): nothing was imported", len(bad), bad[0])
	}
	keys := make([]clientkey.Key, 0, r.Len())
	for _, k := range r.Keys() {
		keys = append(keys, k.Key)
	}
	n, err := keyadmin.New(st).Import(ctx, by, keys)
	if errors.Is(err, keyadmin.ErrKidTaken) {
		return 0, errors.New("a kid of the file is in the database already: nothing was imported")
	}
	return n, err
}

// keyError words a refusal of the key administration for the command
// line: the detail of its problem (admin.KeyProblem, which words a
// registry file's refusals too), with the flag or command that changes it;
// client is the key's client, for the advice.
func keyError(err error, client string) error {
	var p *problem.Problem
	if !errors.As(admin.KeyProblem(err, client, ""), &p) {
		return err
	}
	switch p.Code {
	case problem.CodeWeakerKey:
		return fmt.Errorf("%s (--allow-weaker)", p.Detail)
	case problem.CodeLastActiveKey:
		return fmt.Errorf("%s (hdc keys rotate --client %s, or --force)", p.Detail, client)
	case problem.CodeNoKeyToRotate:
		return fmt.Errorf("%s with hdc keys add", p.Detail)
	}
	return errors.New(cmp.Or(p.Detail, p.Code))
}

// directOnly refuses --admin for what, which works on this machine's
// files with the keeper: a registry file, an import, a wrap. The Admin
// API knows the database's keys alone.
func (f *storeFlags) directOnly(what string) error {
	if f.Admin.URL != "" {
		return fmt.Errorf("%s works on this machine's files, directly: drop --admin (HDC_ADMIN_URL)", what)
	}
	return nil
}
