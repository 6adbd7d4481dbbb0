package storetest

import (
	"errors"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// ev is a valid event of action, for the calls of the role tests, which
// check the change and not its record (testAuditWired does).
func ev(a audit.Action) audit.Event {
	return audit.Event{At: at(0), Action: a, Outcome: audit.Success, Workspace: "w1"}
}

// Ids of the wired events.
const (
	request1 = "7c6b5a49-3827-4160-9f5e-4d3c2b1a0f05"
	sub1     = "1a2b3c4d-5e6f-4a0b-8c1d-2e3f4a5b6c07"
	grant1   = "3c4d5e6f-7a8b-4c2d-8e3f-4a5b6c7d8e09"
)

// unrecordable makes e invalid (a request id that is not a UUID), so that
// appending it fails, as a failing audit write would.
func unrecordable(e audit.Event) audit.Event {
	e.Request = "not-a-uuid"
	return e
}

// wantTrail fails unless ws's chain holds records of these actions, in
// order, and verifies, and returns the records.
// Records up to after (those of the fixtures) are left out.
func wantTrail(t *testing.T, s Store, ws string, after int64, actions ...audit.Action) []audit.Record {
	t.Helper()
	rs := listAudit(t, s, store.AuditFilter{Workspace: ws, After: after})
	var got []audit.Action
	for _, r := range rs {
		got = append(got, r.Action)
	}
	if !slices.Equal(got, actions) {
		t.Fatalf("trail of %q = %v, want %v", ws, got, actions)
	}
	if len(rs) > 0 {
		must(t, verifyAudit(t, s, ws))
	}
	return rs
}

// wantAppendFailed fails unless err is the failed append's.
func wantAppendFailed(t *testing.T, err error) {
	t.Helper()
	if err == nil || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrTokenReused) {
		t.Fatalf("error = %v, want the append's", err)
	}
}

// testAuditWired: every store method that records its change appends the
// event in the change's transaction. An append that fails undoes the
// change; a change that fails appends nothing.
func testAuditWired(t *testing.T, s Store) {
	seed(t, s, "w1", clientA)
	seed(t, s, "w2", clientB)
	from1, from2 := head(t, s, "w1").Last.Seq, head(t, s, "w2").Last.Seq
	src := netip.MustParseAddr("2001:db8::7")
	event := func(a audit.Action, d time.Duration) audit.Event {
		return audit.Event{At: at(d), Action: a, Outcome: audit.Success, Workspace: "w1", Client: clientA,
			Source: src, Kid: "k1", Request: request1}
	}

	// Login.
	wantAppendFailed(t, s.CreateRefreshFamily(ctx(t), family("f1", clientA, "w1"), token(1, at(0)), unrecordable(event(audit.Login, 0))))
	_, err := s.RefreshFamilyOf(ctx(t), clientA, hash(1))
	wantErr(t, err, store.ErrNotFound)
	wantTrail(t, s, "w1", from1)
	must(t, s.CreateRefreshFamily(ctx(t), family("f1", clientA, "w1"), token(1, at(0)), event(audit.Login, 0)))
	wantErr(t, s.CreateRefreshFamily(ctx(t), family("f1", clientA, "w1"), token(2, at(0)), event(audit.Login, 0)), store.ErrConflict)
	rs := wantTrail(t, s, "w1", from1, audit.Login)
	if r := rs[0]; r.Client != clientA || r.Source != src || r.Kid != "k1" || r.Request != request1 || r.Outcome != audit.Success || !r.At.Equal(at(0)) {
		t.Fatalf("login record = %+v", r)
	}

	// Refresh: the event passed is the request's; the store makes it a
	// refresh in the family's workspace. A failed append leaves the token
	// unconsumed.
	other := event(audit.Refresh, time.Hour)
	other.Workspace = "w2"
	_, err = s.RotateRefreshToken(ctx(t), clientA, hash(1), token(2, at(time.Hour)), at(time.Hour), unrecordable(other))
	wantAppendFailed(t, err)
	_, err = s.RotateRefreshToken(ctx(t), clientA, hash(1), token(2, at(time.Hour)), at(time.Hour), other)
	must(t, err)
	_, err = s.RotateRefreshToken(ctx(t), clientA, hash(9), token(3, at(time.Hour)), at(time.Hour), other)
	wantErr(t, err, store.ErrNotFound)
	rs = wantTrail(t, s, "w1", from1, audit.Login, audit.Refresh)
	if r := rs[1]; r.Workspace != "w1" || r.Outcome != audit.Success || r.Client != clientA {
		t.Fatalf("refresh record = %+v", r)
	}
	wantTrail(t, s, "w2", from2)

	// Reuse: the revocation and its record commit together, or neither.
	_, err = s.RotateRefreshToken(ctx(t), clientA, hash(1), token(4, at(2*time.Hour)), at(2*time.Hour), unrecordable(other))
	wantAppendFailed(t, err)
	if f, err := s.RefreshFamilyOf(ctx(t), clientA, hash(2)); err != nil || !f.RevokedAt.IsZero() {
		t.Fatalf("family after a failed reuse record = %+v, %v", f, err)
	}
	_, err = s.RotateRefreshToken(ctx(t), clientA, hash(1), token(4, at(2*time.Hour)), at(2*time.Hour), other)
	wantErr(t, err, store.ErrTokenReused)
	if f, err := s.RefreshFamilyOf(ctx(t), clientA, hash(2)); err != nil || f.RevokedAt.IsZero() {
		t.Fatalf("family after reuse = %+v, %v", f, err)
	}
	rs = wantTrail(t, s, "w1", from1, audit.Login, audit.Refresh, audit.RefreshReuse)
	if r := rs[2]; r.Outcome != audit.Denied {
		t.Fatalf("reuse record = %+v", r)
	}

	// Upload.
	upload := event(audit.RecordUpload, 3*time.Hour)
	upload.Entity = audit.Entity{Kind: audit.EntityCareContext, ID: care1}
	wantAppendFailed(t, s.CreateRecord(ctx(t), record("r1", care1, "w1", clientA), unrecordable(upload)))
	_, err = s.GetRecord(ctx(t), "w1", care1)
	wantErr(t, err, store.ErrNotFound)
	must(t, s.CreateRecord(ctx(t), record("r1", care1, "w1", clientA), upload))
	wantErr(t, s.CreateRecord(ctx(t), record("r2", care1, "w1", clientA), upload), store.ErrConflict)
	rs = wantTrail(t, s, "w1", from1, audit.Login, audit.Refresh, audit.RefreshReuse, audit.RecordUpload)
	if r := rs[3]; r.Entity != upload.Entity {
		t.Fatalf("upload record = %+v", r)
	}

	// Parser submission: the record's workspace, whatever the event says.
	submit := event(audit.ResourcesSubmit, 4*time.Hour)
	submit.Workspace, submit.Client, submit.Entity = "", "", upload.Entity
	res := []store.Resource{{ResourceType: "Observation", ID: "o1", JSON: []byte(`{"resourceType":"Observation","id":"o1"}`)}}
	_, err = s.AddRecordResources(ctx(t), care1, res, at(4*time.Hour), unrecordable(submit))
	wantAppendFailed(t, err)
	if r, err := s.GetRecord(ctx(t), "w1", care1); err != nil || r.Version != 1 {
		t.Fatalf("record after a failed submission record = %+v, %v", r, err)
	}
	_, err = s.AddRecordResources(ctx(t), care2, res, at(4*time.Hour), submit)
	wantErr(t, err, store.ErrNotFound)
	_, err = s.AddRecordResources(ctx(t), care1, res, at(4*time.Hour), submit)
	must(t, err)
	rs = wantTrail(t, s, "w1", from1, audit.Login, audit.Refresh, audit.RefreshReuse, audit.RecordUpload, audit.ResourcesSubmit)
	if r := rs[4]; r.Workspace != "w1" || r.Entity != upload.Entity {
		t.Fatalf("submission record = %+v", r)
	}

	// Subscriptions.
	sub := store.Subscription{ID: sub1, WorkspaceID: "w1", Endpoint: "https://example.com/hook", Protocol: "https",
		EventNames: []string{"record.parsed"}, Status: store.SubscriptionActive, CreatedAt: at(5 * time.Hour)}
	created := event(audit.SubscriptionCreate, 5*time.Hour)
	created.Entity = audit.Entity{Kind: audit.EntitySubscription, ID: sub1}
	wantAppendFailed(t, s.CreateSubscription(ctx(t), sub, 0, unrecordable(created)))
	if subs, err := s.ListSubscriptions(ctx(t), store.SubscriptionFilter{WorkspaceID: "w1"}); err != nil || len(subs) != 0 {
		t.Fatalf("subscriptions after a failed record = %+v, %v", subs, err)
	}
	must(t, s.CreateSubscription(ctx(t), sub, 0, created))
	dup := sub
	dup.ID = "2b3c4d5e-6f7a-4b1c-9d2e-3f4a5b6c7d08"
	wantErr(t, s.CreateSubscription(ctx(t), dup, 0, created), store.ErrConflict)
	wantTrail(t, s, "w1", from1, audit.Login, audit.Refresh, audit.RefreshReuse, audit.RecordUpload, audit.ResourcesSubmit, audit.SubscriptionCreate)

	// Delivery disabled by a 410.
	ids := publish(t, s, "e1", "w1", "record.parsed", at(5*time.Hour))
	if len(ids) != 1 || len(claim(t, s, "a", at(5*time.Hour), 10)) != 1 {
		t.Fatalf("deliveries %q", ids)
	}
	gone := event(audit.DeliveryDisabled, 6*time.Hour)
	gone.Client, gone.Source, gone.Kid, gone.Request, gone.Entity = "", netip.Addr{}, "", "", created.Entity
	a := attempt(ids[0], at(6*time.Hour), "http_410", 410)
	wantAppendFailed(t, s.FinishAttempt(ctx(t), "a", a, store.Next{Status: store.DeliveryFailed, DisableSubscription: true, Disabled: unrecordable(gone)}))
	if got, err := s.GetSubscription(ctx(t), "w1", sub1); err != nil || got.Status != store.SubscriptionActive {
		t.Fatalf("subscription after a failed record = %+v, %v", got, err)
	}
	must(t, s.FinishAttempt(ctx(t), "a", a, store.Next{Status: store.DeliveryFailed, DisableSubscription: true, Disabled: gone}))
	if got, err := s.GetSubscription(ctx(t), "w1", sub1); err != nil || got.Status != store.SubscriptionDisabled {
		t.Fatalf("subscription after 410 = %+v, %v", got, err)
	}

	// Deletion.
	deleted := created
	deleted.Action, deleted.At = audit.SubscriptionDelete, at(7*time.Hour)
	wantAppendFailed(t, s.DeleteSubscription(ctx(t), "w1", sub1, unrecordable(deleted)))
	if _, err := s.GetSubscription(ctx(t), "w1", sub1); err != nil {
		t.Fatalf("subscription after a failed record: %v", err)
	}
	wantErr(t, s.DeleteSubscription(ctx(t), "w2", sub1, deleted), store.ErrNotFound)
	must(t, s.DeleteSubscription(ctx(t), "w1", sub1, deleted))
	wantTrail(t, s, "w1", from1, audit.Login, audit.Refresh, audit.RefreshReuse, audit.RecordUpload, audit.ResourcesSubmit,
		audit.SubscriptionCreate, audit.DeliveryDisabled, audit.SubscriptionDelete)
	wantTrail(t, s, "w2", from2)
}
