package backend

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
)

// hopTLS returns the TLS configuration of the public listener, or nil
// without the hop's files: this backend's certificate, and a client
// certificate of the hop's authority required of every connection. The
// handshake refuses anyone else; the gate then checks that the certificate
// names the edge (contract.FromEdge). Its errors name the file and the
// setting to fix.
func (c *Config) hopTLS() (*tls.Config, error) {
	if c.HopCA == "" {
		return nil, nil
	}
	var pems [3][]byte
	for i, f := range []struct{ flag, path string }{{"hop-cert", c.HopCert}, {"hop-key", c.HopKey}, {"hop-ca", c.HopCA}} {
		var err error
		if pems[i], err = readPEM(f.flag, f.path); err != nil {
			return nil, err
		}
	}
	cert, err := tls.X509KeyPair(pems[0], pems[1])
	if err != nil {
		return nil, fmt.Errorf("%s %s and %s %s: %w", named("hop-cert"), c.HopCert, named("hop-key"), c.HopKey, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pems[2]) {
		return nil, fmt.Errorf("%s: %s holds no PEM certificate", named("hop-ca"), c.HopCA)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
	}, nil
}

// readPEM reads path, the file of the setting flag, which must hold PEM.
func readPEM(flag, path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", named(flag), err) // the error names path
	}
	if b, _ := pem.Decode(data); b == nil {
		return nil, fmt.Errorf("%s: %s holds no PEM data", named(flag), path)
	}
	return data, nil
}
