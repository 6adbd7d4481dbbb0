package storetest

import (
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// testRotateSigningKey: a rotation makes the current key the previous one
// until the given time, read back by GetSubscription and in claimed
// deliveries; a second rotation drops the oldest; a subscription without
// a key gets no previous one; another workspace's id is not found; each
// rotation is a record of the trail, and one whose record cannot be
// written changes nothing.
func testRotateSigningKey(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	keyed := store.Subscription{ID: "s1", WorkspaceID: "w1", Endpoint: "https://example.com/a", Protocol: "https",
		EventNames: []string{"user.delete"}, SigningKey: "first-key-0123456", Status: store.SubscriptionActive, CreatedAt: at(0)}
	bare := store.Subscription{ID: "s2", WorkspaceID: "w1", Endpoint: "https://example.com/b", Protocol: "https",
		EventNames: []string{"user.delete"}, Status: store.SubscriptionActive, CreatedAt: at(time.Second)}
	must(t, s.CreateSubscription(ctx(t), keyed, 0, ev(audit.SubscriptionCreate)))
	must(t, s.CreateSubscription(ctx(t), bare, 0, ev(audit.SubscriptionCreate)))

	wantErr(t, s.RotateSigningKey(ctx(t), "w2", "s1", rotation("stolen-key-012345", at(time.Hour))), store.ErrNotFound)
	wantErr(t, s.RotateSigningKey(ctx(t), "w1", "nope", rotation("second-key-012345", at(time.Hour))), store.ErrNotFound)
	wantKeys(t, s, "s1", "first-key-0123456", "", time.Time{})
	wantAppendFailed(t, s.RotateSigningKey(ctx(t), "w1", "s1", store.SigningKeyChange{Key: "unrecorded-key-01", Event: unrecordable(ev(audit.SigningKeyRotate))}))
	wantKeys(t, s, "s1", "first-key-0123456", "", time.Time{})
	trail := listAudit(t, s, store.AuditFilter{Workspace: "w1"})

	must(t, s.RotateSigningKey(ctx(t), "w1", "s1", rotation("second-key-012345", at(time.Hour))))
	wantKeys(t, s, "s1", "second-key-012345", "first-key-0123456", at(time.Hour))
	must(t, s.RotateSigningKey(ctx(t), "w1", "s1", rotation("third-key-0123456", at(2*time.Hour))))
	wantKeys(t, s, "s1", "third-key-0123456", "second-key-012345", at(2*time.Hour))
	must(t, s.RotateSigningKey(ctx(t), "w1", "s2", rotation("fresh-key-0123456", at(time.Hour))))
	wantKeys(t, s, "s2", "fresh-key-0123456", "", time.Time{})
	wantTrail(t, s, "w1", trail[len(trail)-1].Seq, audit.SigningKeyRotate, audit.SigningKeyRotate, audit.SigningKeyRotate)

	publish(t, s, "e1", "w1", "user.delete", at(0))
	for _, d := range claim(t, s, "o", at(time.Minute), 10) {
		if d.Subscription.ID == "s1" && (d.Subscription.PreviousSigningKey != "second-key-012345" ||
			!d.Subscription.PreviousKeyExpiresAt.Equal(at(2*time.Hour))) {
			t.Fatalf("claimed delivery's previous key: %q until %v", d.Subscription.PreviousSigningKey, d.Subscription.PreviousKeyExpiresAt)
		}
	}
}

// rotation is a change to key, the replaced one signing until until.
func rotation(key string, until time.Time) store.SigningKeyChange {
	return store.SigningKeyChange{Key: key, PreviousUntil: until, Event: ev(audit.SigningKeyRotate)}
}

// wantKeys checks subscription id's keys as w1 reads it.
func wantKeys(t *testing.T, s Store, id, key, previous string, until time.Time) {
	t.Helper()
	sub, err := s.GetSubscription(ctx(t), "w1", id)
	must(t, err)
	if sub.SigningKey != key || sub.PreviousSigningKey != previous || !sub.PreviousKeyExpiresAt.Equal(until) {
		t.Fatalf("keys of %s: %q, previous %q until %v; want %q, %q until %v", id,
			sub.SigningKey, sub.PreviousSigningKey, sub.PreviousKeyExpiresAt, key, previous, until)
	}
}
