package opscmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/health-data-connect/hdc/internal/apiclient"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/jwe"
)

// DemoCredentialsFile is the name of the demo credentials hdc up writes in
// its data directory.
const DemoCredentialsFile = "demo-credentials.json"

// syncDemoCredentials keeps the demo credentials in dir in step with k, a
// new active key: when they belong to k's client, they take its kid and
// secret, so that hdc call goes on encrypting with the active key. It
// returns the file it rewrote, or "" when there was none to rewrite.
func syncDemoCredentials(dir string, k clientkey.Key) (string, error) {
	path := filepath.Join(dir, DemoCredentialsFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	var creds apiclient.Credentials
	if err := json.Unmarshal(b, &creds); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if creds.ClientID != k.ClientID {
		return "", nil
	}
	creds.Kid, creds.EncryptionKey, creds.Enc = k.Kid, k.Secret, k.ContentEncryption()
	if creds.Enc == jwe.EncA128CBCHS256 {
		creds.Enc = "" // the default, left out
	}
	return path, creds.Save(path)
}
