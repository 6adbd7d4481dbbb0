// Package console drives the operator console (hdc console) in Debian's
// headless Chromium, through chromedp, against a real stack: an operator's
// tasks end to end, an auditor's pages without a change, axe-core on every
// page, no error in the browser's console, and the screenshots of
// docs/console.md.
package console

import (
	"testing"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

func TestMain(m *testing.M) { hdctest.Main(m) }
