package main

import (
	"fmt"
	"os"

	"github.com/health-data-connect/hdc/caddymodule"
)

// The reference Caddyfile's site variables.
const (
	siteEnv       = "HDC_SITE"
	otherHostsEnv = "HDC_SITE_OTHER_HOSTS"
)

// setOtherHosts sets HDC_SITE_OTHER_HOSTS from HDC_SITE unless the operator
// set it (caddymodule.OtherHosts), before any command adapts the
// Caddyfile, so that run, reload, adapt and validate read the same site: a
// request for a host the site does not name then gets hdc_site's 421
// problem, not Caddy's empty 200.
func setOtherHosts() error {
	if _, ok := os.LookupEnv(otherHostsEnv); ok {
		return nil
	}
	other, err := caddymodule.OtherHosts(os.Getenv(siteEnv))
	if err != nil {
		return fmt.Errorf("%s: %w", siteEnv, err)
	}
	return os.Setenv(otherHostsEnv, other)
}
