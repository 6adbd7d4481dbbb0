package opscmd

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
)

// hopDirEnv names the environment variable that --dir defaults to.
const hopDirEnv = "HDC_HOP_DIR"

// defaultHopValidity is how long hdc tls certificates are valid.
const defaultHopValidity = 365 * 24 * time.Hour

func newTLSCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tls",
		Short: "Make the certificates of the edge–backend hop's mutual TLS",
		Long: `The backend's listeners require a client certificate issued by the hop's own
certificate authority that names a role: the public listener the edge's, the
internal listener's routes the edge's (JWKS), a publisher's (events), a
parser's (parser results) or a scraper's (metrics); /healthz and /readyz need
none. Every client checks the backend's certificate against the same
authority. hdc tls init makes the authority and the certificates of the
backend and the edge in a directory:

  ca.pem                 the authority's certificate: give it to every client and backend (HDC_HOP_CA)
  ca-key.pem             the authority's key: keep it offline; only hdc tls issue needs it
  backend.pem, backend-key.pem   for each backend (HDC_HOP_CERT, HDC_HOP_KEY)
  edge.pem, edge-key.pem         for each edge (HDC_HOP_CERT, HDC_HOP_KEY)

Every file is mode 0600. hdc tls issue makes a new certificate from the
authority: another role's (publisher.pem, parser.pem, scraper.pem and their
keys), one of each edge's or backend's own (--name edge-1: edge-1.pem,
edge-1-key.pem), a person's (--role operator|auditor --name
alice@example.org: the Admin API's), or, with --force, one to renew before
it expires. hdc tls revoke puts a certificate on the backends' deny-list:
refused on both listeners, whatever its role, within 2 seconds.`,
	}
	var dir string
	cli.EnvStringVar(cmd.PersistentFlags(), &dir, "dir", hopDirEnv, "", "directory of the hop's files")
	dirOf := func() (string, error) {
		if dir == "" {
			return "", errors.New("--dir is required")
		}
		return dir, nil
	}
	cmd.AddCommand(newTLSInitCmd(dirOf), newTLSIssueCmd(dirOf), newTLSRevokeCmd(), newTLSRevokedCmd())
	return cmd
}

// hopFiles is what init and issue print: where the files are.
type hopFiles struct {
	Dir   string   `json:"dir"`
	Files []string `json:"files"`
}

func newTLSInitCmd(dirOf func() (string, error)) *cobra.Command {
	var (
		validity time.Duration
		replace  bool
	)
	cmd := &cobra.Command{
		Use:     "init --dir DIR",
		Short:   "Make the hop's authority and a certificate for the edge and the backend",
		Example: "  hdc tls init --dir /etc/hdc/tls",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := dirOf()
			if err != nil {
				return err
			}
			if err := pki.InitDir(dir, validity, replace); err != nil {
				return err
			}
			return printHopFiles(cmd, dir, pki.CAFile, pki.CAKeyFile, pki.CertFile(pki.Backend), pki.KeyFile(pki.Backend),
				pki.CertFile(pki.Edge), pki.KeyFile(pki.Edge))
		},
	}
	cmd.Flags().DurationVar(&validity, "validity", defaultHopValidity, "how long the certificates are valid")
	cmd.Flags().BoolVar(&replace, "replace", false, "replace an authority the directory already holds")
	return cmd
}

func newTLSIssueCmd(dirOf func() (string, error)) *cobra.Command {
	var (
		leaf     pki.Leaf
		validity time.Duration
		force    bool
	)
	cmd := &cobra.Command{
		Use:   "issue --role ROLE [--name NAME] --dir DIR",
		Short: "Make a new certificate of a role (backend, edge, publisher, parser, scraper, operator, auditor) from the hop's authority",
		Long: `Make a new certificate of a role from the authority in --dir. The role is what
the certificate proves to the hop: the backend's server certificate, or a
client certificate the backend's routes admit by role. An operator's or an
auditor's certificate names a person (--name alice@example.org), whom the
audit trail records as the author of every change and read made with it
through the Admin API: issue one per person, never share one.

--name NAME names the files (NAME.pem, NAME-key.pem) and the certificate's
subject (CN=NAME), so that each edge and each backend of a fleet has a
certificate of its own; without it they are the role's own (ROLE.pem,
ROLE-key.pem). NAME is 1 to 64 ASCII letters, digits, '@', '.', '-', '_' and '+',
not beginning with '.' or '-', neither "ca" nor ending in "-key".

An existing file is never replaced unless --force: renewing a certificate
before it expires is issue --force with the same role and name. Prints the
files it wrote.`,
		Example: `  hdc tls issue --role edge --name edge-1 --dir /etc/hdc/tls
  hdc tls issue --role backend --name backend-2 --dir /etc/hdc/tls
  hdc tls issue --role publisher --dir /etc/hdc/tls
  hdc tls issue --role operator --name alice@example.org --dir /etc/hdc/tls
  hdc tls issue --role edge --name edge-1 --force --dir /etc/hdc/tls   # renew`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := dirOf()
			if err != nil {
				return err
			}
			if !slices.Contains(pki.Roles, leaf.Role) {
				return errors.New("--role must be backend, edge, publisher, parser, scraper, operator or auditor")
			}
			if contract.Role(leaf.Role).IsPerson() && leaf.Name == "" {
				return fmt.Errorf("--role %s names a person: give --name (alice@example.org)", leaf.Role)
			}
			if cmd.Flags().Changed("name") && leaf.Name == "" {
				return errors.New("--name is empty: name the certificate, or leave --name out for the role's own files")
			}
			files, err := pki.IssueFromDir(dir, leaf, validity, force)
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%w: --force replaces it, or --name names another certificate", err)
			}
			if err != nil {
				return err
			}
			return printHopFiles(cmd, dir, files...)
		},
	}
	cmd.Flags().StringVar((*string)(&leaf.Role), "role", "", "backend, edge, publisher, parser, scraper, operator or auditor")
	cmd.Flags().StringVar(&leaf.Name, "name", "", "name of the certificate's files and subject (default the role's)")
	cmd.Flags().DurationVar(&validity, "validity", defaultHopValidity, "how long the certificate is valid")
	cmd.Flags().BoolVar(&force, "force", false, "replace the files of a certificate the directory already holds")
	return cmd
}

func printHopFiles(cmd *cobra.Command, dir string, names ...string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	return cli.PrintJSON(cmd.OutOrStdout(), hopFiles{Dir: abs, Files: names})
}
