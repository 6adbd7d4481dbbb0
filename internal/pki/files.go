package pki

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/privatefile"
)

// Files of a hop directory, as hdc tls init writes them.
const (
	CAFile    = "ca.pem"     // the authority's certificate: both sides trust it
	CAKeyFile = "ca-key.pem" // the authority's key: only hdc tls issue needs it
)

// CertFile names the certificate file of role's own leaf.
func CertFile(role Role) string { return Leaf{Role: role}.certFile() }

// KeyFile names the private key file of role's own leaf.
func KeyFile(role Role) string { return Leaf{Role: role}.keyFile() }

// Leaf is a certificate to issue into a hop directory.
type Leaf struct {
	Role Role
	// Name names the leaf's files, Name.pem and Name-key.pem, and its
	// subject (CN=Name), so that each edge or backend of a fleet has a
	// certificate of its own; empty, the role's own files and subject. It
	// is never read for authorization, which goes by the role alone. A
	// certificate of a person's role (contract.Role.IsPerson) must have
	// one: it names the person, whom the audit trail records.
	Name string
}

// name is what the leaf's files are named after.
func (l Leaf) name() string { return cmp.Or(l.Name, string(l.Role)) }

func (l Leaf) certFile() string { return l.name() + ".pem" }

func (l Leaf) keyFile() string { return l.name() + "-key.pem" }

// checkName reports whether name may name a leaf: a person's name
// (contract.ValidPersonName: 1 to 64 ASCII letters, digits, '@', '.',
// '-', '_' and '+'; an operator's address will name one), which leaves out
// path separators and control characters; not beginning with '.' (a
// hidden file, "..") or '-' (read as a flag by the commands that handle
// the files); and not "ca" nor ending in "-key", whose files would be the
// authority's or another leaf's key.
func checkName(name string) error {
	if !contract.ValidPersonName(name) || name[0] == '.' || name[0] == '-' || name == "ca" || strings.HasSuffix(name, "-key") {
		return fmt.Errorf("pki: the name %q is not a name of a leaf: 1 to %d ASCII letters, digits, '@', '.', '-', '_' and '+', "+
			"not beginning with '.' or '-', neither \"ca\" nor ending in \"-key\"", name, contract.MaxPersonName)
	}
	return nil
}

// InitDir makes a new authority in dir (created 0700) and issues a
// certificate for each role, valid for validity. It refuses to replace an
// authority dir already holds unless replace is set.
func InitDir(dir string, validity time.Duration, replace bool) error {
	if _, err := os.Stat(filepath.Join(dir, CAFile)); err == nil && !replace {
		return fmt.Errorf("%s already holds an authority (%s); issue from it, or replace it", dir, CAFile)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := NewCA(validity)
	if err != nil {
		return err
	}
	caKey, err := ca.KeyPEM()
	if err != nil {
		return err
	}
	if err := privatefile.Write(filepath.Join(dir, CAKeyFile), caKey); err != nil {
		return err
	}
	if err := privatefile.Write(filepath.Join(dir, CAFile), ca.CertPEM()); err != nil {
		return err
	}
	for _, role := range []Role{Backend, Edge} {
		if err := ca.issueTo(dir, Leaf{Role: role}, validity, true); err != nil {
			return err
		}
	}
	return nil
}

// IssueFromDir issues a new certificate of leaf from the authority in dir
// and writes it there. Unless replace is set, it writes nothing when
// either of the leaf's files exists, and its error wraps fs.ErrExist. It
// returns the names of the files it wrote, the certificate's first.
func IssueFromDir(dir string, leaf Leaf, validity time.Duration, replace bool) ([]string, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, CAFile))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, CAKeyFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s has no %s: certificates are issued where the authority's key is", dir, CAKeyFile)
	}
	if err != nil {
		return nil, err
	}
	ca, err := ParseCA(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	if err := ca.issueTo(dir, leaf, validity, replace); err != nil {
		return nil, err
	}
	return []string{leaf.certFile(), leaf.keyFile()}, nil
}

// issueTo issues a certificate of leaf and writes its files into dir,
// replacing them only if replace is set.
func (ca *CA) issueTo(dir string, leaf Leaf, validity time.Duration, replace bool) error {
	certPEM, keyPEM, err := ca.Issue(leaf, validity)
	if err != nil {
		return err
	}
	key, cert := filepath.Join(dir, leaf.keyFile()), filepath.Join(dir, leaf.certFile())
	write := privatefile.Write
	if !replace {
		// Both are checked first, so that neither is written when one
		// exists; Create still refuses a file made since.
		for _, f := range []string{key, cert} {
			switch _, err := os.Lstat(f); {
			case err == nil:
				return fmt.Errorf("%s: %w", f, fs.ErrExist)
			case !errors.Is(err, fs.ErrNotExist):
				return err
			}
		}
		write = privatefile.Create
	}
	if err := write(key, keyPEM); err != nil {
		return err
	}
	return write(cert, certPEM)
}

// ClientTLS returns the TLS configuration of a client of the backend's
// listeners: the certificate and key of its role from certFile and
// keyFile (none when both are empty), the authority of caFile as the one
// root, the backend's name (contract.BackendServerName) to check. Its
// errors name the file that does not load.
func ClientTLS(certFile, keyFile, caFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS13, ServerName: contract.BackendServerName}
	if certFile != "" || keyFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("the certificate %s and key %s: %w", certFile, keyFile, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("the hop's authority: %w", err)
	}
	cfg.RootCAs = x509.NewCertPool()
	if !cfg.RootCAs.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("the hop's authority: %s holds no PEM certificate", caFile)
	}
	return cfg, nil
}
