package console

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
)

// deliverySearch are the delivery log's filters the console offers, the
// parameters of GET /admin/v1/subscriptions/{id}/deliveries.
var deliverySearch = []string{"status", "event_type", "since", "until", "cursor"}

// subscriptionView is a subscription's page: the subscription, a page of
// its delivery log with the filter that selected it, the recovery's
// default start, and how many deliveries a recovery just sent again.
type subscriptionView struct {
	Subscription adminapi.Subscription
	Form         map[string]string
	Statuses     []string
	Deliveries   []adminapi.Delivery
	Next         string
	RecoverSince string
	Recovered    string
}

// subscriptionPage shows a subscription with a page of its delivery log,
// newest first.
func (s *Server) subscriptionPage(r *http.Request) (view, error) {
	id, in := r.PathValue("id"), r.URL.Query()
	v, form := url.Values{}, map[string]string{}
	for _, name := range deliverySearch {
		if val := in.Get(name); val != "" {
			v.Set(name, val)
			form[name] = val
		}
	}
	q := adminapi.DeliveryQuery{Status: form["status"], EventType: form["event_type"], Since: form["since"], Until: form["until"],
		Cursor: form["cursor"]}
	sub, err := s.api.GetSubscription(r.Context(), id)
	if err != nil {
		return view{}, err
	}
	p, err := s.api.ListDeliveries(r.Context(), id, q)
	if err != nil {
		return view{}, err
	}
	sv := subscriptionView{Subscription: sub, Form: form, Deliveries: p.Deliveries, Recovered: in.Get("recovered"),
		Statuses:     adminapi.DeliveryStatuses,
		RecoverSince: time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Minute).Format(time.RFC3339)}
	if p.Next != nil {
		sv.Next = "/webhooks/" + url.PathEscape(id) + "?" + pageLink(v, *p.Next)
	}
	return view{Template: "subscription", Title: "Subscription " + sub.ID, Nav: "webhooks", Data: sv}, nil
}

// deliveryView is a delivery's page: the delivery with its attempts, and
// its subscription.
type deliveryView struct {
	Subscription string
	Delivery     adminapi.DeliveryDetail
}

// deliveryPage shows a delivery of a subscription with each attempt.
func (s *Server) deliveryPage(r *http.Request) (view, error) {
	id := r.PathValue("id")
	d, err := s.api.GetDelivery(r.Context(), id, r.PathValue("delivery"))
	if err != nil {
		return view{}, err
	}
	return view{Template: "delivery", Title: "Delivery " + d.ID, Nav: "webhooks", Data: deliveryView{Subscription: id, Delivery: d}}, nil
}

// redeliver sends a delivery again, and shows it.
func (s *Server) redeliver(r *http.Request) (view, error) {
	id := r.PathValue("id")
	d, err := s.api.Redeliver(r.Context(), id, r.PathValue("delivery"))
	if err != nil {
		return view{}, err
	}
	return view{Redirect: "/webhooks/" + url.PathEscape(id) + "/deliveries/" + url.PathEscape(d.ID)}, nil
}

// recoverDeliveries sends again every delivery of the subscription that
// failed since the form's time, and shows the subscription with how many.
func (s *Server) recoverDeliveries(r *http.Request) (view, error) {
	since, err := time.Parse(time.RFC3339, r.PostFormValue("since"))
	if err != nil {
		return view{}, invalid("since must be a time in RFC 3339, 2026-03-15T14:02:00Z.")
	}
	id := r.PathValue("id")
	rec, err := s.api.RecoverDeliveries(r.Context(), id, since)
	if err != nil {
		return view{}, err
	}
	return view{Redirect: "/webhooks/" + url.PathEscape(id) + "?" + url.Values{"recovered": {strconv.Itoa(rec.Recovered)}}.Encode()}, nil
}
