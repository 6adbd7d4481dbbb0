package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/store"
)

// storeFlags are the flags that locate the backend's database, shared by
// the command groups that manage identities.
type storeFlags struct {
	db   string
	data string
}

// register adds --db and --data to cmd's persistent flags, defaulting to
// HDC_DATABASE_URL and HDC_DATA like the server.
func (f *storeFlags) register(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&f.db, "db", envOr("HDC_DATABASE_URL", ""), "database URL; default SQLite <data>/hdc.db (env HDC_DATABASE_URL)")
	cmd.PersistentFlags().StringVar(&f.data, "data", envOr("HDC_DATA", backend.DefaultConfig().DataDir), "backend data directory (env HDC_DATA)")
}

// run opens the identity service, runs fn with it and closes the store.
func (f *storeFlags) run(cmd *cobra.Command, fn func(*identity.Service) error) error {
	st, err := backend.OpenStore(cmd.Context(), f.db, f.data)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(identity.New(st, 1))
}

// warnUnknownClient warns on standard error when the backend's database
// these flags locate is there and has no active client of that id. A
// database that is not there (the registry may be kept where the backend's
// database is not) or does not answer in a few seconds is no warning, and
// none is created. The warning names the flags, never a database URL,
// which may hold a password.
func (f *storeFlags) warnUnknownClient(cmd *cobra.Command, client string) {
	ctx, cancel := context.WithTimeout(cmd.Context(), 3*time.Second)
	defer cancel()
	st, err := backend.OpenExistingStore(ctx, f.db, f.data)
	if err != nil {
		return
	}
	defer st.Close()
	err = identity.New(st, 1).CheckClient(ctx, client)
	if errors.Is(err, identity.ErrInvalidClient) {
		fmt.Fprintf(cmd.ErrOrStderr(), "hdc: warning: the backend's database (--db, --data) has no active client %q: "+
			"the edge will accept the key, the backend will refuse the client (create it with hdc clients create)\n", client)
	}
}

// notFound words a store miss for an operator.
func notFound(err error, kind, id string) error {
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no %s %q", kind, id)
	}
	return err
}
