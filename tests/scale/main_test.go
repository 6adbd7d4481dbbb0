// Package scale runs the fleet (PostgreSQL, S3 on loopback, a KMS, two
// backends and two edges) and the tests that time something: propagation
// within a second, revocation within seconds, one workspace's deliveries
// not slowed by another's, the bench. Its tests that time something keep
// the machine to themselves: they do not call t.Parallel, and
// scripts/test.sh runs this package alone, after the others. Its tests
// that time nothing (the fleet's walkthrough, the console, the audit
// chain of two replicas, the traces) call t.Parallel, so that Go runs
// them side by side once every test that times something has ended.
package scale

import (
	"testing"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

func TestMain(m *testing.M) { hdctest.Main(m) }
