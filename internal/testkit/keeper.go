package testkit

import (
	"encoding/base64"
	"testing"

	"gocloud.dev/secrets/localsecrets"

	"github.com/health-data-connect/hdc/internal/keeper"
)

// KeeperURL returns the base64key:// URL of a fresh random local keeper.
func KeeperURL() string {
	key, err := localsecrets.NewRandomKey()
	if err != nil {
		panic("testkit: " + err.Error()) // crypto/rand does not fail
	}
	return "base64key://" + base64.URLEncoding.EncodeToString(key[:])
}

// Keeper returns a fresh random local keeper, closed when the test ends.
func Keeper(t testing.TB) *keeper.Keeper {
	t.Helper()
	k, err := keeper.Open(t.Context(), KeeperURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}
