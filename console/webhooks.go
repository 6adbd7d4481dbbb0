package console

import (
	"net/http"
	"net/url"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
)

// webhooksView is a page of subscriptions, the filter that selected them,
// and the link to the next page.
type webhooksView struct {
	Workspace, Status string
	Failing           bool
	Subscriptions     []adminapi.Subscription
	Next              string
}

// webhooksPage lists the webhook subscriptions with their state, of a
// workspace and a status, the failing ones only when asked, a page at a
// time.
func (s *Server) webhooksPage(r *http.Request) (view, error) {
	q := r.URL.Query()
	sq := adminapi.SubscriptionQuery{Workspace: q.Get("workspace"), Status: q.Get("status"), Cursor: q.Get("cursor"), Limit: pageSize}
	switch q.Get("failing") {
	case "", "false":
	case "true":
		sq.Failing = true
	default:
		return view{}, invalid("failing must be true or false.")
	}
	p, err := s.api.ListSubscriptions(r.Context(), sq)
	if err != nil {
		return view{}, err
	}
	wv := webhooksView{Workspace: sq.Workspace, Status: sq.Status, Failing: sq.Failing, Subscriptions: p.Items}
	if p.Next != "" {
		wv.Next = "/webhooks?" + pageLink(q, p.Next)
	}
	return view{Template: "webhooks", Title: "Webhooks", Nav: "webhooks", Data: wv}, nil
}

// webhookChanges registers the changes of the webhooks' pages.
func (s *Server) webhookChanges(change func(string, changeFunc)) {
	change("POST /webhooks/{id}/delete", s.deleteSubscription)
	change("POST /webhooks/{id}/recover", s.recoverDeliveries)
	change("POST /webhooks/{id}/deliveries/{delivery}/redeliver", s.redeliver)
}

// deleteSubscription deletes the subscription of the path, and goes back
// to its workspace's subscriptions.
func (s *Server) deleteSubscription(r *http.Request) (view, error) {
	sub, err := s.api.DeleteSubscription(r.Context(), r.PathValue("id"))
	if err != nil {
		return view{}, err
	}
	return view{Redirect: "/webhooks?" + url.Values{"workspace": {sub.WorkspaceID}}.Encode()}, nil
}
