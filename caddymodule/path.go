package caddymodule

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/health-data-connect/hdc/internal/problem"
)

// errNonCanonicalPath refuses a path whose route Caddy chose on its
// cleaned form: the hop would carry it as sent, so the backend would
// decide on another path than the edge did.
var errNonCanonicalPath = problem.New(http.StatusBadRequest, problem.CodeNonCanonicalPath,
	"The path must be canonical: no empty segment (//), no dot segment (. or ..), and no encoded dot, slash or backslash.")

// canonicalPath reports whether u's path is one Caddy's matchers and the
// backend read alike: it starts with a slash and has no empty segment, no
// dot segment, no backslash, and no percent-encoded dot, slash or
// backslash, which a later reader could decode into one of those.
func canonicalPath(u *url.URL) bool {
	escaped := u.EscapedPath()
	if !strings.HasPrefix(escaped, "/") || strings.ContainsRune(escaped, '\\') {
		return false
	}
	segs := strings.Split(escaped[1:], "/")
	for i, seg := range segs {
		if seg == "." || seg == ".." || seg == "" && i < len(segs)-1 { // a trailing slash is a segment of its own
			return false
		}
	}
	for i := strings.IndexByte(escaped, '%'); i >= 0; i = strings.IndexByte(escaped, '%') {
		if enc := strings.ToLower(escaped[i+1 : min(i+3, len(escaped))]); enc == "2e" || enc == "2f" || enc == "5c" {
			return false
		}
		escaped = escaped[i+1:]
	}
	return true
}
