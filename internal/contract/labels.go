package contract

import (
	"net/http"
	"strings"
)

// Route returns the public route a request path belongs to, as a path
// template ("/notification/v1/connect/webhook/subscriptions/{id}" for one
// subscription), or "other": a label of bounded cardinality for metrics
// and logs, which never carries an identifier.
func Route(path string) string {
	switch path {
	case PathLogin, PathRefresh, PathRefreshCompat, PathRetrieve, PathAuditEvents, PathSubscriptions, PathUpload, PathJWKS:
		return path
	}
	if id, ok := strings.CutPrefix(path, PathSubscriptions+"/"); ok && id != "" && !strings.Contains(id, "/") {
		return PathSubscriptions + "/{id}"
	}
	return "other"
}

// Method returns m when it is a standard HTTP method and "other" when not:
// a label of bounded cardinality, whatever a client sends.
func Method(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "other"
}
