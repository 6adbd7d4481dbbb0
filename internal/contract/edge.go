package contract

import (
	"crypto/tls"
	"crypto/x509"
	"net/url"
	"slices"
)

// The identities of the hop's certificates (package pki makes them).
const (
	// EdgeURI is the URI name of an edge's client certificate. The backend
	// serves a request as the edge's only when the request came over TLS
	// with a verified client certificate that names it.
	EdgeURI = "tag:health-data-connect,2026:edge"
	// BackendServerName is the DNS name in the backend's server
	// certificate, which an edge checks whatever address it dials.
	BackendServerName = "hdc-backend"
)

// FromEdge reports whether cs, the TLS state of a request, shows a client
// certificate verified against the hop's authority that names the edge.
func FromEdge(cs *tls.ConnectionState) bool {
	if cs == nil || len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return false
	}
	return NamesEdge(cs.VerifiedChains[0][0])
}

// NamesEdge reports whether cert is an edge's client certificate: for
// client authentication, with the edge's URI name. Whether the hop's
// authority issued it is the caller's to check.
func NamesEdge(cert *x509.Certificate) bool {
	if !slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
		return false
	}
	return slices.ContainsFunc(cert.URIs, func(u *url.URL) bool { return u.String() == EdgeURI })
}
