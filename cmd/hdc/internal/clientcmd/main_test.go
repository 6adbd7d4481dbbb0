package clientcmd

import (
	"testing"

	"github.com/health-data-connect/hdc/cmd/hdc/internal/clitest"
)

// TestMain lets the test binary stand in for hdc with the clients'
// commands (clitest).
func TestMain(m *testing.M) { clitest.Main(m, Commands) }
