package main

import (
	"fmt"
	"os"

	"github.com/health-data-connect/hdc/caddymodule/hdcsite"
)

// The reference Caddyfile's site variables.
const (
	siteEnv       = "HDC_SITE"
	otherHostsEnv = "HDC_SITE_OTHER_HOSTS"
	tlsEnv        = "HDC_TLS"
	autoHTTPSEnv  = "HDC_AUTO_HTTPS"
)

// setSiteEnv sets the variables the reference Caddyfile derives from
// others, unless the operator set them, before any command adapts the
// Caddyfile, so that run, reload, adapt and validate read the same site:
// HDC_SITE_OTHER_HOSTS from HDC_SITE (hdcsite.OtherHosts), so that a
// request for a host the site does not name gets hdc_site's 421 problem,
// not Caddy's empty 200; and HDC_AUTO_HTTPS from HDC_TLS: with the
// operator's own certificate (files), Caddy must not also manage
// certificates for the names that site, answering any host of its ports,
// shares with the catch-all.
func setSiteEnv() error {
	other, err := hdcsite.OtherHosts(os.Getenv(siteEnv))
	if err != nil {
		return fmt.Errorf("%s: %w", siteEnv, err)
	}
	autoHTTPS := "disable_redirects"
	if os.Getenv(tlsEnv) == "files" {
		autoHTTPS += " disable_certs"
	}
	for name, v := range map[string]string{otherHostsEnv: other, autoHTTPSEnv: autoHTTPS} {
		if _, ok := os.LookupEnv(name); !ok {
			if err := os.Setenv(name, v); err != nil {
				return err
			}
		}
	}
	return nil
}
