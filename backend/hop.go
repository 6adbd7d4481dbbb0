package backend

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// hopTLS returns the TLS configuration of the public listener, or nil
// without the hop's files: this backend's certificate, and a client
// certificate of the hop's authority required of every connection. The
// handshake refuses anyone else; the gate then checks that the certificate
// names the edge (contract.FromEdge).
func (c *Config) hopTLS() (*tls.Config, error) {
	if c.HopCA == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.HopCert, c.HopKey)
	if err != nil {
		return nil, fmt.Errorf("the hop's certificate and key (HDC_HOP_CERT, HDC_HOP_KEY): %w", err)
	}
	ca, err := os.ReadFile(c.HopCA)
	if err != nil {
		return nil, fmt.Errorf("the hop's CA certificate (HDC_HOP_CA): %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("the hop's CA certificate (HDC_HOP_CA) holds no PEM certificate")
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
	}, nil
}
