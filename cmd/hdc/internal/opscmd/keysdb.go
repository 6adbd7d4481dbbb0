package opscmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/backend/sealed"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// withKeys runs fn with the key administration of the database the flags
// locate, opened with its keeper (backend/keyadmin, which owns the rules).
func (f *storeFlags) withKeys(cmd *cobra.Command, fn func(*keyadmin.Service) error) error {
	st, err := f.Open(cmd.Context())
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(keyadmin.New(st))
}

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

// keyError says what a key command's refusal means and, where a flag
// changes it, which.
func keyError(err error, client, kid string) error {
	var weaker *clientkey.WeakerError
	var lockOut *clientkey.LockOutError
	switch {
	case errors.As(err, &weaker):
		return fmt.Errorf("%w (--allow-weaker)", err)
	case errors.As(err, &lockOut):
		return fmt.Errorf("%w (hdc keys rotate --client %s, or --force)", err, lockOut.Client)
	case errors.Is(err, keyadmin.ErrNoClient):
		return fmt.Errorf("no client %q", client)
	case errors.Is(err, keyadmin.ErrNoKeys):
		return fmt.Errorf("client %q has no keys: add one with hdc keys add", client)
	case errors.Is(err, keyadmin.ErrNoKey):
		return fmt.Errorf("no key with kid %q", kid)
	case errors.Is(err, keyadmin.ErrKidTaken):
		return fmt.Errorf("kid %q already exists", kid)
	}
	return err
}
