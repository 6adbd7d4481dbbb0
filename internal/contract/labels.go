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
	if rest, ok := strings.CutPrefix(path, PathSubscriptions+"/"); ok {
		if t, ok := subscriptionRoute(strings.Split(rest, "/")); ok {
			return PathSubscriptions + t
		}
	}
	return "other"
}

// SubscriptionRoutes are the routes under PathSubscriptions, as templates
// relative to it: one subscription, its delivery log, one delivery and its
// redelivery, the recovery of what failed, a test event, and its signing
// key.
var SubscriptionRoutes = []string{
	"/{id}",
	"/{id}/deliveries",
	"/{id}/deliveries/{delivery_id}",
	"/{id}/deliveries/{delivery_id}/redeliver",
	"/{id}/recover",
	"/{id}/test",
	"/{id}/signing-key",
}

// subscriptionRoute returns the template of SubscriptionRoutes that the
// segments after PathSubscriptions match: a {name} segment matches any
// segment but the empty one.
func subscriptionRoute(segs []string) (string, bool) {
	for _, t := range SubscriptionRoutes {
		ts := strings.Split(t, "/")[1:]
		if len(ts) == len(segs) && segmentsMatch(ts, segs) {
			return t, true
		}
	}
	return "", false
}

func segmentsMatch(template, segs []string) bool {
	for i, t := range template {
		if segs[i] == "" || !strings.HasPrefix(t, "{") && t != segs[i] {
			return false
		}
	}
	return true
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
