package admin

import (
	"context"
	"net/http"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/problem"
)

// subscriptionOut is sub as the API shows it: as the workspace's own list
// does (webhook.SummaryOf), its workspace, and since when it fails.
func subscriptionOut(sub store.Subscription) adminapi.Subscription {
	s := webhook.SummaryOf(sub)
	out := adminapi.Subscription{WorkspaceID: sub.WorkspaceID, ID: s.ID, Endpoint: s.Endpoint, Protocol: s.Protocol,
		EventNames: s.EventNames, Status: s.Status, HasSigningKey: s.HasSigningKey, DeliveryFormat: s.DeliveryFormat,
		CreatedAt: s.CreatedAt, LastDeliveryAt: s.LastDeliveryAt, LastDeliveryOutcome: s.LastDeliveryOutcome, DisabledReason: s.DisabledReason}
	if !sub.FailingSince.IsZero() {
		out.FailingSince = &sub.FailingSince
	}
	return out
}

// ListSubscriptions returns a page of the webhook subscriptions q selects,
// of every workspace unless q names one. A page of failing ones reads at
// most adminapi.FailingScan subscriptions (failingWindow).
func (s *Service) ListSubscriptions(ctx context.Context, q adminapi.SubscriptionQuery) (adminapi.Page[adminapi.Subscription], error) {
	return s.listSubscriptions(ctx, q, adminapi.FailingScan)
}

// listSubscriptions is ListSubscriptions whose page of failing
// subscriptions reads at most scan.
func (s *Service) listSubscriptions(ctx context.Context, q adminapi.SubscriptionQuery, scan int) (adminapi.Page[adminapi.Subscription], error) {
	if err := q.Check(); err != nil {
		return adminapi.Page[adminapi.Subscription]{}, err
	}
	after, err := afterCursor(q.Cursor)
	if err != nil {
		return adminapi.Page[adminapi.Subscription]{}, err
	}
	limit := sizeOf(q.Limit)
	f := store.SubscriptionFilter{WorkspaceID: q.Workspace, Status: store.SubscriptionStatus(q.Status), Failing: q.Failing,
		After: after, Limit: limit}
	more, err := s.failingWindow(ctx, &f, scan)
	if err != nil {
		return adminapi.Page[adminapi.Subscription]{}, err
	}
	list, err := s.st.ListSubscriptions(ctx, f)
	if err != nil {
		return adminapi.Page[adminapi.Subscription]{}, err
	}
	p := keysetPage(mapped(list, subscriptionOut), limit, func(s adminapi.Subscription) store.Cursor {
		return store.Cursor{CreatedAt: s.CreatedAt, ID: s.ID}
	})
	if p.Next == "" && more {
		p.Next = nextCursor(f.Through) // the window ended before the page filled
	}
	return p, nil
}

// failingWindow bounds a list by Failing, which no index serves, to a
// window of scan subscriptions from f.After (f.Through), and reports
// whether more follow it.
func (s *Service) failingWindow(ctx context.Context, f *store.SubscriptionFilter, scan int) (bool, error) {
	if !f.Failing {
		return false, nil
	}
	end, more, err := s.st.SubscriptionWindow(ctx, *f, scan)
	f.Through = end
	return more, err
}

// GetSubscription returns the webhook subscription id, of whatever
// workspace.
func (s *Service) GetSubscription(ctx context.Context, id string) (adminapi.Subscription, error) {
	sub, err := s.st.GetSubscription(ctx, "", id)
	if err != nil {
		return adminapi.Subscription{}, err
	}
	return subscriptionOut(sub), nil
}

// DeleteSubscription deletes the webhook subscription id, of whatever
// workspace, with its deliveries, and returns it as it was; the audit
// record names the person.
func (s *Service) DeleteSubscription(ctx context.Context, id string) (adminapi.Subscription, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return adminapi.Subscription{}, err
	}
	sub, err := s.webhooks.DeleteBy(ctx, by, id)
	if err != nil {
		return adminapi.Subscription{}, err
	}
	return subscriptionOut(sub), nil
}

// WithTests is the backend's sender of test events, which TestSubscription
// sends through; without it (direct mode) a test event is refused.
func WithTests(t *webhook.TestEvents) Option { return func(s *Service) { s.tests = t } }

// errNoTests refuses a test event where no backend's delivery runs: hdc's
// direct mode.
var errNoTests = problem.New(http.StatusConflict, problem.CodeConflict,
	"a test event goes out through a backend's delivery, its SSRF guard and timeouts: send it through the Admin API (--admin)")

// EnableSubscription turns the subscription id, of whatever workspace,
// back on as its client's PATCH does (webhook.Service.SetEnabled): its
// failing period starts afresh and its kept deliveries are due at once;
// the subscription_enable record names the person. An active
// subscription is answered as it is, unchanged and unrecorded.
func (s *Service) EnableSubscription(ctx context.Context, id string) (adminapi.Subscription, error) {
	sub, e, err := s.subscriptionChange(ctx, id)
	if err != nil || sub.Status == store.SubscriptionActive {
		return subscriptionOut(sub), err
	}
	sub, err = s.webhooks.SetEnabled(ctx, sub.WorkspaceID, sub.ID, true, e)
	return subscriptionOut(sub), err
}

// TestSubscription sends the subscription id, of whatever workspace, a
// test event now, as its client's POST …/test does and within the same
// ration (webhook.TestEvents), once its subscription_test record naming
// the person is written; it says how the attempt went.
func (s *Service) TestSubscription(ctx context.Context, id string) (adminapi.TestEvent, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return adminapi.TestEvent{}, err
	}
	if s.tests == nil {
		return adminapi.TestEvent{}, errNoTests
	}
	sub, err := s.tests.Take(ctx, "", id)
	if err != nil {
		return adminapi.TestEvent{}, err
	}
	e := webhook.SubscriptionEvent(audit.Event{Workspace: sub.WorkspaceID, Person: by}, audit.SubscriptionTest, sub.ID, s.now())
	if _, err := s.st.AppendAudit(ctx, e); err != nil {
		return adminapi.TestEvent{}, err
	}
	a := webhook.AnswerOf(s.tests.SendTo(ctx, sub))
	return adminapi.TestEvent{EventID: a.EventID, Outcome: a.Outcome, Status: a.Status, DurationMS: a.DurationMS}, nil
}

func (h *Handler) enableSubscription(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.EnableSubscription)
}

func (h *Handler) testSubscription(w http.ResponseWriter, r *http.Request) error {
	err := byID(w, r, h.svc.TestSubscription)
	webhook.SetRetryAfter(w, err)
	return err
}

func (h *Handler) listSubscriptions(w http.ResponseWriter, r *http.Request) error {
	return listedBy(w, r, adminapi.ParseSubscriptionQuery, h.svc.ListSubscriptions)
}

func (h *Handler) getSubscription(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.GetSubscription)
}

func (h *Handler) deleteSubscription(w http.ResponseWriter, r *http.Request) error {
	return byID(w, r, h.svc.DeleteSubscription)
}
