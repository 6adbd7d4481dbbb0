// Package e2e runs the real binaries on loopback, a stack of its own per
// test (hdc-backend and hdc-edge on the reference Caddyfile, operated with
// the hdc CLI), side by side: every test here calls t.Parallel.
package e2e

import (
	"testing"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

func TestMain(m *testing.M) { hdctest.Main(m) }
