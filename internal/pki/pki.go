// Package pki makes the certificates of the hop to the backend: a private
// certificate authority, the backend's server certificate and the client
// certificates of each role (the edges', and those of the publishers,
// parsers and scrapers of the internal listener), all ECDSA P-256. The
// backend serves its listeners over TLS and requires a client certificate
// of this authority naming the role a route needs (contract.Role); its
// clients verify the backend against the same authority
// (contract.BackendServerName). Nothing here is a credential that travels
// in a request, so no log line can replay it.
//
// It is built on crypto/x509 alone: the authority signs two kinds of leaf
// and never needs revocation lists, an ACME server or a database, which
// is what a PKI library would add.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"slices"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
)

// Role is what a leaf certificate is for.
type Role string

// Roles of the hop: the backend's server certificate, and a client
// certificate for each role the backend's listeners know (contract.Role),
// naming the role's URI.
const (
	// Backend is a server certificate for contract.BackendServerName.
	Backend Role = "backend"
	// Edge is the edge's client certificate: the public listener, the
	// JWKS.
	Edge = Role(contract.RoleEdge)
	// Publisher publishes webhook events on the internal listener.
	Publisher = Role(contract.RolePublisher)
	// Parser posts parser results on the internal listener.
	Parser = Role(contract.RoleParser)
	// Scraper reads the internal listener's metrics.
	Scraper = Role(contract.RoleScraper)
	// Operator is a person who changes and reads through the Admin API.
	Operator = Role(contract.RoleOperator)
	// Auditor is a person who reads through the Admin API and audits.
	Auditor = Role(contract.RoleAuditor)
)

// Roles are every role, the backend's first.
var Roles = []Role{Backend, Edge, Publisher, Parser, Scraper, Operator, Auditor}

// clockSkew backdates certificates, so that a machine whose clock is a
// little behind accepts them at once.
const clockSkew = 5 * time.Minute

// CA is a certificate authority: its certificate and its private key.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// NewCA makes a self-signed authority valid for validity.
func NewCA(validity time.Duration) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "Health Data Connect hop CA"},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key}, nil
}

// Issue makes a certificate of leaf, valid for validity, and returns it
// and its private key, PEM-encoded. The role is what the certificate
// proves; a name, if any, is only its subject.
func (ca *CA) Issue(leaf Leaf, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	if leaf.Name != "" {
		if err := checkName(leaf.Name); err != nil {
			return nil, nil, err
		}
	}
	if leaf.Name == "" && contract.Role(leaf.Role).IsPerson() {
		return nil, nil, fmt.Errorf("pki: a certificate of the role %s names the person who holds it: give it a name (alice@example.org)", leaf.Role)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		NotBefore:    now.Add(-clockSkew),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	switch {
	case leaf.Role == Backend:
		tmpl.Subject = pkix.Name{CommonName: contract.BackendServerName}
		tmpl.DNSNames = []string{contract.BackendServerName}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	case slices.Contains(contract.Roles, contract.Role(leaf.Role)):
		uri, _ := url.Parse(contract.Role(leaf.Role).URI())
		tmpl.Subject = pkix.Name{CommonName: "hdc-" + string(leaf.Role)}
		tmpl.URIs = []*url.URL{uri}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	default:
		return nil, nil, fmt.Errorf("pki: unknown role %q", leaf.Role)
	}
	if leaf.Name != "" {
		tmpl.Subject = pkix.Name{CommonName: leaf.Name}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), pemBlock("PRIVATE KEY", keyDER), nil
}

// CertPEM returns the authority's certificate, PEM-encoded: what both sides
// trust.
func (ca *CA) CertPEM() []byte { return pemBlock("CERTIFICATE", ca.Cert.Raw) }

// KeyPEM returns the authority's private key, PEM-encoded: keep it offline;
// it only issues certificates.
func (ca *CA) KeyPEM() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(ca.Key)
	if err != nil {
		return nil, err
	}
	return pemBlock("PRIVATE KEY", der), nil
}

// ParseCA reads an authority from its PEM certificate and key.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	certDER, err := pemBytes(certPEM, "CERTIFICATE")
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(certDER)
	if err != nil {
		return nil, fmt.Errorf("pki: the CA certificate: %w", err)
	}
	if !cert.IsCA {
		return nil, errors.New("pki: the certificate is not a CA's")
	}
	keyDER, err := pemBytes(keyPEM, "PRIVATE KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(keyDER)
	if err != nil {
		return nil, errors.New("pki: the CA key is not a PKCS #8 private key")
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, errors.New("pki: the CA key cannot sign")
	}
	return &CA{Cert: cert, Key: signer}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// pemBytes returns the first block of data, which must be of type typ.
// Its errors never quote the data, which may be a key.
func pemBytes(data []byte, typ string) ([]byte, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != typ {
		return nil, fmt.Errorf("pki: not a PEM %s", typ)
	}
	return b.Bytes, nil
}
