package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/privatefile"
)

// Files of a hop directory, as hdc tls init writes them.
const (
	CAFile    = "ca.pem"     // the authority's certificate: both sides trust it
	CAKeyFile = "ca-key.pem" // the authority's key: only hdc tls issue needs it
)

// CertFile and KeyFile name the certificate and key files of role.
func CertFile(role Role) string { return string(role) + ".pem" }

// KeyFile names the private key file of role.
func KeyFile(role Role) string { return string(role) + "-key.pem" }

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
		if err := ca.issueTo(dir, role, validity); err != nil {
			return err
		}
	}
	return nil
}

// IssueFromDir issues a new certificate for role from the authority in dir
// and writes it there, replacing the role's files.
func IssueFromDir(dir string, role Role, validity time.Duration) error {
	certPEM, err := os.ReadFile(filepath.Join(dir, CAFile))
	if err != nil {
		return err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, CAKeyFile))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s has no %s: certificates are issued where the authority's key is", dir, CAKeyFile)
	}
	if err != nil {
		return err
	}
	ca, err := ParseCA(certPEM, keyPEM)
	if err != nil {
		return err
	}
	return ca.issueTo(dir, role, validity)
}

func (ca *CA) issueTo(dir string, role Role, validity time.Duration) error {
	certPEM, keyPEM, err := ca.Issue(role, validity)
	if err != nil {
		return err
	}
	if err := privatefile.Write(filepath.Join(dir, KeyFile(role)), keyPEM); err != nil {
		return err
	}
	return privatefile.Write(filepath.Join(dir, CertFile(role)), certPEM)
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
