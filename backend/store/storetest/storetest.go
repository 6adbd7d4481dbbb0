// Package storetest is the conformance suite of store.Store. Every engine runs
// it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storetest.Store { return openFresh(t) })
//	}
//
// open must return an empty, migrated store and arrange its cleanup.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// Run runs the whole suite; each subtest gets a fresh store from open.
func Run(t *testing.T, open func(t *testing.T) Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s Store)
	}{
		{"Workspaces", testWorkspaces},
		{"Clients", testClients},
		{"ClientPages", testClientPages},
		{"ClientNames", testClientNames},
		{"ClientUpdateAudit", testClientUpdateAudit},
		{"ClientSearch", testClientSearch},
		{"ReplaceSecretHash", testReplaceSecretHash},
		{"HashKey", testHashKey},
		{"SharingGrants", testSharingGrants},
		{"GrantPages", testGrantPages},
		{"SubscriptionPages", testSubscriptionPages},
		{"SubscriptionsFailing", testSubscriptionsFailing},
		{"RefreshRotation", testRefreshRotation},
		{"RefreshReuse", testRefreshReuse},
		{"RefreshFamilyOf", testRefreshFamilyOf},
		{"RefreshFamily", testRefreshFamily},
		{"RefreshTokenClient", testRefreshTokenClient},
		{"RefreshIsolation", testRefreshIsolation},
		{"RefreshConcurrentRotation", testRefreshConcurrentRotation},
		{"SigningKeys", testSigningKeys},
		{"Records", testRecords},
		{"RecordResources", testRecordResources},
		{"RecordAliases", testRecordAliases},
		{"Subscriptions", testSubscriptions},
		{"SubscriptionLimit", testSubscriptionLimit},
		{"RotateSigningKey", testRotateSigningKey},
		{"OutboxPublish", testOutboxPublish},
		{"OutboxClaim", testOutboxClaim},
		{"OutboxClaimTurns", testOutboxClaimTurns},
		{"OutboxConcurrentClaims", testOutboxConcurrentClaims},
		{"OutboxTransitions", testOutboxTransitions},
		{"OutboxStatsAndPrune", testOutboxStatsAndPrune},
		{"DeliveryLogFilters", testDeliveryLogFilters},
		{"DeliveryLogPages", testDeliveryLogPages},
		{"DeliveryLogAttempts", testDeliveryLogAttempts},
		{"DeliveryLogRedeliver", testDeliveryLogRedeliver},
		{"SubscriptionDisable", testSubscriptionDisable},
		{"SubscriptionEnable", testSubscriptionEnable},
		{"AttemptRetention", testAttemptRetention},
		{"ClientLimits", testClientLimits},
		{"Destinations", testDestinations},
		{"DestinationConcurrentGrants", testDestinationConcurrentGrants},
		{"KeylessSubscriptions", testKeylessSubscriptions},
		{"Throttle", testThrottle},
		{"ThrottleConcurrentTakes", testThrottleConcurrentTakes},
		{"AuditAppend", testAuditAppend},
		{"AuditList", testAuditList},
		{"AuditListNewest", testAuditListNewest},
		{"AuditTransaction", testAuditTransaction},
		{"AuditTamper", testAuditTamper},
		{"AuditPrune", testAuditPrune},
		{"AuditPruneGap", testAuditPruneGap},
		{"AuditPruneByRecords", testAuditPruneByRecords},
		{"AuditConcurrentAppends", testAuditConcurrentAppends},
		{"AuditWired", testAuditWired},
		{"OperatorAudit", testOperatorAudit},
		{"DataKey", testDataKey},
		{"Secrets", testSecrets},
		{"ClientKeys", testClientKeys},
		{"ClientKeyKinds", testClientKeyKinds},
		{"ClientKeyList", testClientKeyList},
		{"ClientKeyPages", testClientKeyPages},
		{"ClientKeyConcurrentChanges", testClientKeyConcurrentChanges},
		{"ClientKeyNotices", testClientKeyNotices},
		{"Replays", testReplays},
		{"ReplaysConcurrent", testReplaysConcurrent},
		{"Revocations", testRevocations},
		{"People", testPeople},
		{"PeopleConcurrent", testPeopleConcurrent},
		{"Idempotency", testIdempotency},
		{"FleetBackends", testFleetBackends},
		{"FleetEdges", testFleetEdges},
		{"FleetKeyUses", testFleetKeyUses},
		{"FleetConcurrentReports", testFleetConcurrentReports},
		{"PoolStats", testPoolStats},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

// t0 is a fixed time with sub-microsecond digits, which stores drop.
var t0 = time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d).Truncate(time.Microsecond) }

func ctx(t *testing.T) context.Context { return t.Context() }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

// seed creates workspace ws with client c.
func seed(t *testing.T, s Store, ws, c string) {
	t.Helper()
	_, err := s.EnsureWorkspace(ctx(t), ws, at(0))
	must(t, err)
	must(t, s.CreateClient(ctx(t), store.Client{
		ID: c, WorkspaceID: ws, SecretHash: "$argon2id$" + c, Status: store.ClientActive, CreatedAt: at(0),
	}, operator(audit.ClientCreate, ws)))
}

func testSigningKeys(t *testing.T, s Store) {
	k1 := store.SigningKey{ID: "k1", Generation: 1, Seed: bytes.Repeat([]byte{1}, 32), CreatedAt: at(0)}
	k2 := store.SigningKey{ID: "k2", Generation: 2, Seed: bytes.Repeat([]byte{2}, 32), CreatedAt: at(time.Hour)}
	must(t, s.AddSigningKey(ctx(t), k2))
	must(t, s.AddSigningKey(ctx(t), k1))
	rival := store.SigningKey{ID: "k2b", Generation: 2, Seed: bytes.Repeat([]byte{3}, 32), CreatedAt: at(time.Hour)}
	wantErr(t, s.AddSigningKey(ctx(t), rival), store.ErrConflict)
	keys, err := s.ListSigningKeys(ctx(t))
	must(t, err)
	if len(keys) != 2 || keys[0].ID != "k1" || keys[1].ID != "k2" || !bytes.Equal(keys[1].Seed, k2.Seed) || !keys[1].CreatedAt.Equal(k2.CreatedAt) {
		t.Fatalf("ListSigningKeys = %+v", keys)
	}
	must(t, s.DeleteSigningKey(ctx(t), "k1"))
	must(t, s.DeleteSigningKey(ctx(t), "k1"))
	keys, err = s.ListSigningKeys(ctx(t))
	must(t, err)
	if len(keys) != 1 || keys[0].ID != "k2" {
		t.Fatalf("after delete: %+v", keys)
	}
}
