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

// webhookRoutes are the webhooks' pages and changes.
func (s *Server) webhookRoutes(page func(string, pageFunc) route, change func(string, changeFunc) route) []route {
	return []route{
		page("GET /webhooks", s.webhooksPage),
		page("GET /webhooks/{id}", s.subscriptionPage),
		page("GET /webhooks/{id}/confirm", s.confirmDeletePage),
		page("GET /webhooks/{id}/deliveries/{delivery}", s.deliveryPage),
		change("POST /webhooks/{id}/delete", s.deleteSubscription),
		change("POST /webhooks/{id}/enable", s.enableSubscription),
		change("POST /webhooks/{id}/test", s.testSubscription),
		change("POST /webhooks/{id}/recover", s.recoverDeliveries),
		change("POST /webhooks/{id}/deliveries/{delivery}/redeliver", s.redeliver),
	}
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

// enableSubscription turns the subscription of the path back on, and goes
// back to it.
func (s *Server) enableSubscription(r *http.Request) (view, error) {
	sub, err := s.api.EnableSubscription(r.Context(), r.PathValue("id"))
	if err != nil {
		return view{}, err
	}
	return view{Redirect: "/webhooks/" + url.PathEscape(sub.ID)}, nil
}

// testedView is the result of a test event: its subscription, and how the
// attempt went.
type testedView struct {
	Subscription string
	Event        adminapi.TestEvent
}

// testSubscription sends the subscription of the path a test event, and
// shows how the attempt went (reloaded, the result shows again and sends
// nothing).
func (s *Server) testSubscription(r *http.Request) (view, error) {
	id := r.PathValue("id")
	ev, err := s.api.TestSubscription(r.Context(), id)
	if err != nil {
		return view{}, err
	}
	return view{Template: "tested", Title: "Test event " + ev.Outcome, Nav: "webhooks", Data: testedView{Subscription: id, Event: ev}}, nil
}
