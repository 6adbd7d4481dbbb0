package contract

import (
	"crypto/tls"
	"crypto/x509"
	"net/url"
	"slices"
)

// Role is what a client certificate of the hop's authority lets its
// holder do at the backend: the public listener serves the edge alone,
// and each route of the internal listener one role (package pki makes the
// certificates, each naming its role as a URI).
type Role string

// The roles of client certificates.
const (
	// RoleEdge: the edge, on the public listener, and for the JWKS.
	RoleEdge Role = "edge"
	// RolePublisher: a service of the platform that publishes webhook
	// events (hdc events publish).
	RolePublisher Role = "publisher"
	// RoleParser: a parser that posts its results into a record.
	RoleParser Role = "parser"
	// RoleScraper: monitoring that reads the metrics.
	RoleScraper Role = "scraper"
	// RoleOperator: a person who runs the gateway through the Admin API,
	// changing and reading its clients, keys, grants and subscriptions.
	RoleOperator Role = "operator"
	// RoleAuditor: a person who reads through the Admin API (the clients,
	// keys, grants and fleet) and searches, exports and verifies the audit
	// trail, and changes nothing.
	RoleAuditor Role = "auditor"
)

// Roles are the roles of client certificates, in the order hdc tls
// lists them.
var Roles = []Role{RoleEdge, RolePublisher, RoleParser, RoleScraper, RoleOperator, RoleAuditor}

// IsPerson reports whether r is a role of certificates that name a
// person (PersonName), whom the audit trail records as the author of what
// the certificate's requests do.
func (r Role) IsPerson() bool { return r == RoleOperator || r == RoleAuditor }

// URI returns the URI name of r's certificates.
func (r Role) URI() string { return "tag:health-data-connect,2026:" + string(r) }

// BackendServerName is the DNS name in the backend's server certificate,
// which every client of the backend's listeners checks whatever address
// it dials.
const BackendServerName = "hdc-backend"

// FromEdge reports whether cs, the TLS state of a request, shows a client
// certificate verified against the hop's authority that names the edge.
func FromEdge(cs *tls.ConnectionState) bool { return HasRole(cs, RoleEdge) }

// HasRole reports whether cs, the TLS state of a request, shows a client
// certificate verified against the hop's authority that names role r.
func HasRole(cs *tls.ConnectionState, r Role) bool {
	if cs == nil || len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return false
	}
	return NamesRole(cs.VerifiedChains[0][0], r)
}

// NamesRole reports whether cert is a client certificate of role r: for
// client authentication, with r's URI name. Whether the hop's authority
// issued it is the caller's to check.
func NamesRole(cert *x509.Certificate, r Role) bool {
	if !slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
		return false
	}
	return slices.ContainsFunc(cert.URIs, func(u *url.URL) bool { return u.String() == r.URI() })
}
