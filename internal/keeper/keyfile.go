package keeper

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"

	"gocloud.dev/secrets"
	"gocloud.dev/secrets/localsecrets"

	"github.com/health-data-connect/hdc/internal/privatefile"
)

// KeyFileScheme names a local keeper whose key is in a file:
// keyfile:///absolute/path. The file holds the key in base64 (32 bytes), and
// group and others may not access it.
const KeyFileScheme = "keyfile"

func init() {
	secrets.DefaultURLMux().RegisterKeeper(KeyFileScheme, keyFileOpener{})
}

// keyFileOpener opens keyfile:// URLs.
type keyFileOpener struct{}

func (keyFileOpener) OpenKeeperURL(_ context.Context, u *url.URL) (*secrets.Keeper, error) {
	if u.Host != "" || u.RawQuery != "" || !strings.HasPrefix(u.Path, "/") {
		return nil, errors.New("a keyfile URL is keyfile:///absolute/path, with nothing else")
	}
	data, err := privatefile.Read(u.Path, 1024)
	if err != nil {
		return nil, fmt.Errorf("the key file: %w", err)
	}
	key, err := localsecrets.Base64KeyStd(strings.TrimSpace(string(data)))
	if err != nil {
		return nil, fmt.Errorf("the key file %s does not hold a 32-byte key in base64", u.Path)
	}
	return localsecrets.NewKeeper(key), nil
}

// KeyFileURL returns the keyfile:// URL of path, which must be absolute.
func KeyFileURL(path string) string {
	return (&url.URL{Scheme: KeyFileScheme, Path: path}).String()
}

// CreateKeyFile makes a key file at path, mode 0600, unless one is there,
// and returns its URL. It never replaces a key: what it wrapped would be
// lost.
func CreateKeyFile(path string) (string, error) {
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		return KeyFileURL(path), nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	key, err := localsecrets.NewRandomKey()
	if err != nil {
		return "", err
	}
	data := []byte(base64.StdEncoding.EncodeToString(key[:]) + "\n")
	if err := privatefile.Create(path, data); err != nil {
		return "", err
	}
	return KeyFileURL(path), nil
}
