// Package deploy checks the deployment files of deploy/ as far as a
// machine without a container engine can: the static build the image runs
// (deploy/build.sh, which the Containerfile runs too), the programs it
// builds, the systemd units (systemd-analyze), compose.yaml against the
// Containerfile, the reference Caddyfile and the hop's file names, and the
// monitoring: the alert rules with promtool, the dashboard as Grafana reads
// it, and every metric either names in a scrape of the running programs.
package deploy

import (
	"testing"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

func TestMain(m *testing.M) { hdctest.Main(m) }
