package opscmd

import (
	"testing"

	"github.com/health-data-connect/hdc/cmd/hdc/internal/clitest"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// TestMain lets the test binary stand in for hdc with the operator's
// commands (clitest).
func TestMain(m *testing.M) { clitest.Main(m, Commands) }

// testSealer returns a sealer over the tests' keeper, for the registry
// files the hdc processes write.
func testSealer(t testing.TB) *registryfile.Sealer {
	t.Helper()
	k, err := keeper.Open(t.Context(), clitest.KeeperURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return registryfile.NewSealer(k)
}
