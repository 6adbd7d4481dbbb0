package hdcauth

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// errNonCanonicalPath refuses a path that Caddy's route matching and the
// backend would read differently.
var errNonCanonicalPath = problem.New(http.StatusBadRequest, problem.CodeNonCanonicalPath,
	"The path must be one of the API's exactly as written: same case, no empty or dot segment, no percent-encoding, no character outside A-Z a-z 0-9 - . _ ~ and /.")

// canonicalPath reports whether u's path, as the client sent it, is one of
// the API's paths exactly (contract.Route), with a subscription's id and
// a delivery's of unreserved characters (RFC 3986) only. Caddy chooses a route on the
// path cleaned, case folded and decoded, while the hop carries it as
// sent and the backend's mux matches it exactly: "//…/login", "/MR/api/v2/DOCS",
// "…/log%C4%B0n", "…/x%00" or "…/..;" were routed by the edge and read
// otherwise by the backend. Forwarding only what is a route as written
// leaves the two sides one path to decide on.
func canonicalPath(u *url.URL) bool {
	escaped := u.EscapedPath()
	if contract.Route(escaped) == "other" {
		return false
	}
	rest, ok := strings.CutPrefix(escaped, contract.PathSubscriptions+"/")
	return !ok || !slices.ContainsFunc(strings.Split(rest, "/"), func(seg string) bool { return !unreservedSegment(seg) })
}

// unreservedSegment reports whether s is a path segment of RFC 3986's
// unreserved characters, other than a dot segment: one that every reader
// reads alike, decoded or not.
func unreservedSegment(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}
