// Package scale runs the fleet (PostgreSQL, S3 on loopback, a KMS, two
// backends and two edges) and the tests that time something: propagation
// within a second, revocation within seconds, one workspace's deliveries
// not slowed by another's, the bench. Its tests keep the machine to
// themselves: none calls t.Parallel, and scripts/test.sh runs this package
// alone, after the others.
package scale

import (
	"testing"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

func TestMain(m *testing.M) { hdctest.Main(m) }
