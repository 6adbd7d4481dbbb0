package opscmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
)

// printAll prints every item of a list that takes a PageQuery alone, read
// a page at a time through the Admin API the flags choose.
func printAll[T any](cmd *cobra.Command, sf *storeFlags, list func(adminapi.API) func(context.Context, adminapi.PageQuery) (adminapi.Page[T], error)) error {
	return printEvery(cmd, sf, func(ctx context.Context, p adminapi.API, cursor string) (adminapi.Page[T], error) {
		return list(p)(ctx, adminapi.PageQuery{Cursor: cursor, Limit: adminapi.MaxLimit})
	})
}

// printEvery prints every item of a list, read a page at a time through
// the Admin API the flags choose: page asks p for the page at cursor.
func printEvery[T any](cmd *cobra.Command, sf *storeFlags, page func(ctx context.Context, p adminapi.API, cursor string) (adminapi.Page[T], error)) error {
	return sf.withAPI(cmd, func(ctx context.Context, p adminapi.API) error {
		items, err := adminapi.All(ctx, func(ctx context.Context, cursor string) (adminapi.Page[T], error) {
			return page(ctx, p, cursor)
		})
		if err != nil {
			return err
		}
		return cli.PrintJSON(cmd.OutOrStdout(), items)
	})
}

func newFleetCmd() *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Show the backends, the edges and the people of the fleet, as the backends see them",
		Long: `Show the fleet as the backends see it: each backend writes a heartbeat every
5 seconds, and each edge that follows the key plane reports every 5 seconds
the change it applied and the kids it used. "current" is false for one not
heard from for 15 seconds; one not heard from for the backends'
HDC_FLEET_FORGET_AFTER (an hour by default; in direct mode, an hour) is left
out, and "leaves_at" says when that will be. A backend started again on the
same host and address replaces the row of the one before it, and an edge
started again with the same certificate from the same address too. The people
are every person's certificate that used the Admin API.`,
	}
	sf.register(cmd)
	cmd.AddCommand(&cobra.Command{
		Use:   "backends",
		Short: "List the backends: host, version, address, start, last heartbeat",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printAll(cmd, &sf, func(p adminapi.API) func(context.Context, adminapi.PageQuery) (adminapi.Page[adminapi.Backend], error) {
				return p.ListBackends
			})
		},
	}, &cobra.Command{
		Use:   "edges",
		Short: "List the edges: certificate, change applied, lag behind the newest, last contact",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printAll(cmd, &sf, func(p adminapi.API) func(context.Context, adminapi.PageQuery) (adminapi.Page[adminapi.Edge], error) {
				return p.ListEdges
			})
		},
	}, &cobra.Command{
		Use:   "people",
		Short: "List the people who used the Admin API: name, role, serial, first and last seen, revoked",
		Long: `List every person's certificate a backend of the Admin API served, whatever its
role, by name then serial: the name, role and serial it names, when a backend
first and last served it (to the minute: a backend writes a certificate's use
at most once a minute), and whether it is revoked (hdc tls revoke; hdc tls
revoked lists the revocations). Direct mode, which opens the database
itself, is no person's use of the API and is not listed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printAll(cmd, &sf, func(p adminapi.API) func(context.Context, adminapi.PageQuery) (adminapi.Page[adminapi.PersonSeen], error) {
				return p.ListPeople
			})
		},
	})
	return cmd
}

func newWhoamiCmd() *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "whoami",
		Short: "Print who the operator commands act as: the Admin API's person, or the local user",
		Long: `Print the person the operator commands act as, whom the audit trail records:
with --admin, the person the Admin API takes the certificate for (its name,
role and serial); without, the local user of direct mode, user@host.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sf.withAPI(cmd, func(ctx context.Context, p adminapi.API) error {
				me, err := p.Whoami(ctx)
				if err != nil {
					return err
				}
				return cli.PrintJSON(cmd.OutOrStdout(), me)
			})
		},
	}
	sf.register(cmd)
	return cmd
}

func newTLSRevokeCmd() *cobra.Command {
	var sf storeFlags
	var r adminapi.Revocation
	cmd := &cobra.Command{
		Use:   "revoke --serial S [--name N] [--role R]",
		Short: "Revoke a certificate of the hop's authority: every backend refuses it within 2 seconds",
		Long: `Put the certificate of serial S on the backends' deny-list, in the database:
every backend refuses it on both listeners, whatever its role, within 2
seconds, until it expires. S is the serial in hex as openssl x509 -noout
-serial -in FILE prints it (case and ':' do not matter). --name and --role
only label the entry. The revocation is recorded in the audit trail with the
person who made it. A person cannot revoke the certificate they call with.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return sf.withAPI(cmd, func(ctx context.Context, p adminapi.API) error {
				rev, err := p.RevokeCertificate(ctx, r)
				if err != nil {
					return err
				}
				return cli.PrintJSON(cmd.OutOrStdout(), rev)
			})
		},
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&r.Serial, "serial", "", "the certificate's serial number, hex")
	cmd.Flags().StringVar(&r.Name, "name", "", "the certificate's name, for the list")
	cmd.Flags().StringVar(&r.Role, "role", "", "the certificate's role, for the list")
	_ = cmd.MarkFlagRequired("serial")
	return cmd
}

func newTLSRevokedCmd() *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "revoked",
		Short: "List the revoked certificates",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printAll(cmd, &sf, func(p adminapi.API) func(context.Context, adminapi.PageQuery) (adminapi.Page[adminapi.Revocation], error) {
				return p.ListRevocations
			})
		},
	}
	sf.register(cmd)
	return cmd
}
