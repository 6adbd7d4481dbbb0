// Package edgetest is test support for the edge's modules: a keeper and a
// key registry of known keys, and modules provisioned as Caddy would,
// outside a running config.
package edgetest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// KeeperURL names the keeper of every registry file the tests write, an
// edge's HDC_KEEPER; Sealer seals with it.
var KeeperURL, Sealer = newKeeper()

func newKeeper() (string, *registryfile.Sealer) {
	url := testkit.KeeperURL()
	k, err := keeper.Open(context.Background(), url)
	if err != nil {
		panic(err)
	}
	return url, registryfile.NewSealer(k)
}

// Keys are the keys the tests' registries hold: two clients', c1's in
// each status.
var Keys = []registryfile.Key{
	{Key: clientkey.Key{Kid: "k-c1", ClientID: "c1", Secret: "0123456789abcdef", Status: clientkey.Active}},
	{Key: clientkey.Key{Kid: "k-c1-old", ClientID: "c1", Secret: "aaaaaaaaaaaaaaaa", Status: clientkey.Retiring}},
	{Key: clientkey.Key{Kid: "k-c1-dead", ClientID: "c1", Secret: "bbbbbbbbbbbbbbbb", Status: clientkey.Retired}},
	{Key: clientkey.Key{Kid: "k-c2", ClientID: "c2", Secret: "fedcba9876543210", Status: clientkey.Active}},
}

// SecretOf is the secret of the kid among Keys, or one no key has.
func SecretOf(kid string) string {
	for _, k := range Keys {
		if k.Kid == kid {
			return k.Secret
		}
	}
	return "zzzzzzzzzzzzzzzz"
}

// Key returns the cipher of a shared secret.
func Key(t testing.TB, shared string) *jwe.Key {
	t.Helper()
	k, err := jwe.NewKey(shared)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Registry writes a registry file of keys, sealed with Sealer, in a
// directory of the test's, and returns its path.
func Registry(t testing.TB, keys []registryfile.Key) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys.json")
	err := registryfile.Update(path, Sealer, func(f *registryfile.File) error {
		for _, k := range keys {
			k.CreatedAt = time.Now()
			f.Keys = append(f.Keys, k)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// Provision provisions m in a Caddy context of its own, as a config
// would, and cleans it up when the test ends.
func Provision(t testing.TB, m caddy.Provisioner) {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	if err := m.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if c, ok := m.(caddy.CleanerUpper); ok {
		t.Cleanup(func() {
			if err := c.Cleanup(); err != nil {
				t.Error(err)
			}
		})
	}
}
