// Package interop checks what the real stack emits and accepts with
// implementations this project did not write: the JOSE libraries of npm,
// Python and Go, HTTP clients of every protocol the edge speaks, the
// Standard Webhooks and eka receivers, the official SDK's login. The
// scripts they run live beside this package (package.json, *.mjs, *.py).
package interop

import (
	"testing"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

func TestMain(m *testing.M) { hdctest.Main(m) }
