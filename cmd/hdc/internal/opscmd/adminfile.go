package opscmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// AdminFile is the name of the file hdc up writes in its data directory
// while it runs: where its Admin API is and the local operator's
// certificate that calls it, so that the operator commands run on that
// data directory go through the API as they would on a fleet.
const AdminFile = "admin.json"

// AdminEndpoint is the content of AdminFile: the Admin API's URL and the
// PEM files of the person's certificate, its key and the hop's authority.
type AdminEndpoint struct {
	URL  string `json:"url"`
	Cert string `json:"cert"`
	Key  string `json:"key"`
	CA   string `json:"ca"`
}

// WriteAdminFile writes ep as dir's AdminFile, readable by its owner
// alone, and returns a function that removes it.
func WriteAdminFile(dir string, ep AdminEndpoint) (remove func() error, err error) {
	b, err := json.MarshalIndent(ep, "", "  ")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, AdminFile)
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return nil, err
	}
	return func() error { return os.Remove(path) }, nil
}

// discover fills f from dir's AdminFile when no flag or variable named
// the Admin API: the data directory of a running hdc up. It reports
// whether it did.
func (f *adminFlags) discover(dir string) (bool, error) {
	if f.URL != "" || dir == "" {
		return false, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, AdminFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	var ep AdminEndpoint
	if err := json.Unmarshal(b, &ep); err != nil || ep.URL == "" {
		return false, fmt.Errorf("%s: not an admin file of hdc up (%v); remove it, or pass --direct", filepath.Join(dir, AdminFile), err)
	}
	f.URL, f.Cert, f.Key, f.CA = ep.URL, ep.Cert, ep.Key, ep.CA
	return true, nil
}
