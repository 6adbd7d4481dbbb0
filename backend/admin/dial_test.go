package admin_test

import (
	"crypto/tls"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin/adminclient"
)

// dial returns a client of the Admin API at url with the caller's TLS
// configuration, closed when the test ends.
func dial(t *testing.T, url string, caller *tls.Config) *adminclient.Client {
	t.Helper()
	c, err := adminclient.New([]string{url}, caller, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
