// Package hdcsite is the hdc_site handler: a request for a host the site
// does not serve is answered 421 (site.go), and OtherHosts derives the
// catch-all addresses that bring such requests to it; its Caddyfile
// directive is in caddyfile.go.
package hdcsite

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/health-data-connect/hdc/internal/problem"
)

func init() {
	caddy.RegisterModule(Site{})
}

// Site is the hdc_site handler: it answers a request for a host the site
// does not serve with 421 misdirected_request, a problem, and passes the
// others on. The site's hosts are those its addresses name; a site whose
// addresses name no host serves every host, and passes every request on.
//
// Caddy gives a request whose Host matches no site of its server an empty
// 200. The reference Caddyfile therefore puts the site's port for any host
// beside its named address (HDC_SITE_OTHER_HOSTS, which hdc-edge derives
// from HDC_SITE), so that such a request reaches this handler instead.
//
//	hdc_site <address>...
type Site struct {
	// Hosts are the hosts the site serves, as Caddy's host matcher reads
	// them (case-insensitive, a leading "*." for one label); none: every
	// host.
	Hosts caddyhttp.MatchHost `json:"hosts,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (Site) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.hdc_site",
		New: func() caddy.Module { return new(Site) },
	}
}

// Provision readies the host matcher.
func (s *Site) Provision(ctx caddy.Context) error {
	if len(s.Hosts) == 0 {
		return nil
	}
	return s.Hosts.Provision(ctx)
}

// errMisdirected answers a request for a host the site does not serve.
var errMisdirected = problem.New(http.StatusMisdirectedRequest, problem.CodeMisdirectedRequest,
	"This edge does not serve the host the request names.")

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if len(s.Hosts) > 0 {
		if ok, err := s.Hosts.MatchWithError(r); err != nil || !ok {
			w.Header().Set("Connection", "close")
			problem.Write(w, errMisdirected)
			return nil
		}
	}
	return next.ServeHTTP(w, r)
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Site)(nil)
	_ caddyhttp.MiddlewareHandler = (*Site)(nil)
	_ caddyfile.Unmarshaler       = (*Site)(nil)
)

// OtherHosts returns the catch-all addresses of the ports on which the
// site addresses (space-separated, as HDC_SITE holds them) name a host: the
// same scheme and port for any host, such as "https://" for
// "api.example.org" and "https://:8443" for "https://127.0.0.1:8443", so
// that the reference Caddyfile's site answers every host of its ports and
// hdc_site can refuse the ones it does not serve. It returns "" when no
// address names a host, or when each port that does has its catch-all
// already, and an error for an address Caddy would not read.
func OtherHosts(site string) (string, error) {
	var named []string
	catchAll := map[string]bool{}
	for _, a := range strings.Fields(site) {
		addr, err := httpcaddyfile.ParseAddress(a)
		if err != nil {
			return "", err
		}
		key := portKey(addr)
		if addr.Host == "" {
			catchAll[key] = true
		} else if !slices.Contains(named, key) {
			named = append(named, key)
		}
	}
	named = slices.DeleteFunc(named, func(k string) bool { return catchAll[k] })
	return strings.Join(named, " "), nil
}

// portKey is the catch-all address of addr's scheme and port, with
// Caddy's defaults: HTTPS unless the port is 80 or the scheme says http,
// and the scheme's port when none is named.
func portKey(addr httpcaddyfile.Address) string {
	scheme, port := addr.Scheme, addr.Port
	if scheme == "" {
		scheme = "https"
		if port == strconv.Itoa(caddyhttp.DefaultHTTPPort) {
			scheme = "http"
		}
	}
	if port == "" || port == strconv.Itoa(caddyhttp.DefaultHTTPSPort) && scheme == "https" ||
		port == strconv.Itoa(caddyhttp.DefaultHTTPPort) && scheme == "http" {
		return scheme + "://"
	}
	return scheme + "://:" + port
}
