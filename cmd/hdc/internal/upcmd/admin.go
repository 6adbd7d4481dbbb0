package upcmd

import (
	"fmt"
	"net"
	"path/filepath"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/opscmd"
	"github.com/health-data-connect/hdc/internal/pki"
)

// publishAdmin issues an operator's certificate of the hop's authority in
// hopDir for the local user (audit.LocalOperator's name) and writes data's
// opscmd.AdminFile, which names it and the backend's internal listener:
// the operator commands run on data then go through the Admin API, as
// they would on a fleet, and the audit trail names the local user as a
// person of the API, not as direct mode. It returns the person's name and
// a function that removes the file, for when the stack stops.
func publishAdmin(data, hopDir, internalListen string) (string, func() error, error) {
	name := audit.LocalOperator().Name
	leaf := pki.Leaf{Role: pki.Operator, Name: name}
	files, err := pki.IssueFromDir(hopDir, leaf, upHopValidity, true)
	if err != nil {
		return "", nil, fmt.Errorf("making the local operator's certificate: %w", err)
	}
	remove, err := opscmd.WriteAdminFile(data, opscmd.AdminEndpoint{
		URL:  "https://" + dialable(internalListen),
		Cert: filepath.Join(hopDir, files[0]),
		Key:  filepath.Join(hopDir, files[1]),
		CA:   filepath.Join(hopDir, pki.CAFile),
	})
	return name, remove, err
}

// dialable returns a listen address as an address to dial: an unspecified
// host (":9081", "0.0.0.0:9081", "[::]:9081") becomes the loopback.
func dialable(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// dataFlag returns the --data flag the operator commands need to find
// data, or "" when it is their default.
func dataFlag(data string) string {
	if def, err := filepath.Abs(storage.DefaultDataDir); err == nil && def == data {
		return ""
	}
	return " --data " + data
}
