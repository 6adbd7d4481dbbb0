package opscmd

import (
	"testing"

	"github.com/health-data-connect/hdc/cmd/hdc/internal/clitest"
	"github.com/health-data-connect/hdc/internal/keeper"
	kidregistry "github.com/health-data-connect/hdc/kid-registry"
)

// TestMain lets the test binary stand in for hdc with the operator's
// commands (clitest).
func TestMain(m *testing.M) { clitest.Main(m, Commands) }

// testSealer returns a sealer over the tests' keeper, for the registry
// files the hdc processes write.
func testSealer(t testing.TB) *kidregistry.Sealer {
	t.Helper()
	k, err := keeper.Open(t.Context(), clitest.KeeperURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return kidregistry.NewSealer(k)
}
