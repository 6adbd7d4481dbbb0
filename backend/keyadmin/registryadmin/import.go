package registryadmin

import (
	"context"
	"errors"
	"fmt"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// ImportInto stores every key of the file in the database db administers
// as it is (keyadmin.Service.Import: kid, secret, kind, status and dates),
// each recorded in the name of ctx's person, all or none: a key whose
// secret does not open, or a kid the database has already, fails the
// import, and nothing is stored. It returns how many keys it stored. hdc
// keys import, and hdc up moving an earlier version's registry into the
// database, call it.
func (s *Service) ImportInto(ctx context.Context, db *keyadmin.Service) (int, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return 0, err
	}
	r, err := registryfile.Load(s.path, s.sealer)
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
	n, err := db.Import(ctx, by, keys)
	if errors.Is(err, keyadmin.ErrKidTaken) {
		return 0, errors.New("a kid of the file is in the database already: nothing was imported")
	}
	return n, err
}
