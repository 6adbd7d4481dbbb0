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
	"fmt"
	"slices"
	"sync"
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
		{"ReplaceSecretHash", testReplaceSecretHash},
		{"HashKey", testHashKey},
		{"SharingGrants", testSharingGrants},
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
		{"OutboxPublish", testOutboxPublish},
		{"OutboxClaim", testOutboxClaim},
		{"OutboxClaimTurns", testOutboxClaimTurns},
		{"OutboxConcurrentClaims", testOutboxConcurrentClaims},
		{"OutboxTransitions", testOutboxTransitions},
		{"OutboxStatsAndPrune", testOutboxStatsAndPrune},
		{"Throttle", testThrottle},
		{"ThrottleConcurrentTakes", testThrottleConcurrentTakes},
		{"AuditAppend", testAuditAppend},
		{"AuditList", testAuditList},
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
		{"ClientKeyList", testClientKeyList},
		{"ClientKeyConcurrentChanges", testClientKeyConcurrentChanges},
		{"ClientKeyNotices", testClientKeyNotices},
		{"Replays", testReplays},
		{"ReplaysConcurrent", testReplaysConcurrent},
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

func testWorkspaces(t *testing.T, s Store) {
	created, err := s.EnsureWorkspace(ctx(t), "w1", t0)
	must(t, err)
	if !created {
		t.Fatal("first EnsureWorkspace did not create")
	}
	created, err = s.EnsureWorkspace(ctx(t), "w1", at(time.Hour))
	must(t, err)
	if created {
		t.Fatal("second EnsureWorkspace created again")
	}
	w, err := s.GetWorkspace(ctx(t), "w1")
	must(t, err)
	if w.ID != "w1" || !w.CreatedAt.Equal(at(0)) {
		t.Fatalf("workspace = %+v, want created at %v (microseconds kept, first creation kept)", w, at(0))
	}
	_, err = s.GetWorkspace(ctx(t), "w2")
	wantErr(t, err, store.ErrNotFound)
	must(t, s.Ping(ctx(t)))
}

func testClients(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	c2 := store.Client{ID: "c2", WorkspaceID: "w1", SecretHash: "h2", Status: store.ClientActive, CreatedAt: at(time.Second)}
	must(t, s.CreateClient(ctx(t), c2, operator(audit.ClientCreate, "w1")))
	wantErr(t, s.CreateClient(ctx(t), c2, operator(audit.ClientCreate, "w1")), store.ErrConflict)
	wantErr(t, s.CreateClient(ctx(t), store.Client{ID: "c3", WorkspaceID: "nope", SecretHash: "h", Status: store.ClientActive, CreatedAt: t0}, operator(audit.ClientCreate, "nope")), store.ErrNotFound)

	got, err := s.GetClient(ctx(t), "c2")
	must(t, err)
	if got != c2 {
		t.Fatalf("GetClient = %+v, want %+v", got, c2)
	}
	_, err = s.GetClient(ctx(t), "c3")
	wantErr(t, err, store.ErrNotFound)

	must(t, s.SetClientStatus(ctx(t), "c1", store.ClientDisabled, operator(audit.ClientDisable, "w1")))
	wantErr(t, s.SetClientStatus(ctx(t), "c3", store.ClientDisabled, operator(audit.ClientDisable, "w1")), store.ErrNotFound)
	list, err := s.ListClients(ctx(t))
	must(t, err)
	if len(list) != 2 || list[0].ID != "c1" || list[1].ID != "c2" || list[0].Status != store.ClientDisabled {
		t.Fatalf("ListClients = %+v", list)
	}
}

func testReplaceSecretHash(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	c, err := s.GetClient(ctx(t), "c1")
	must(t, err)
	must(t, s.ReplaceSecretHash(ctx(t), "c1", c.SecretHash, "moved"))
	// Where the hash is no longer the old one, nothing changes.
	must(t, s.ReplaceSecretHash(ctx(t), "c1", c.SecretHash, "moved again"))
	must(t, s.ReplaceSecretHash(ctx(t), "c9", "x", "y"))
	if got, err := s.GetClient(ctx(t), "c1"); err != nil || got.SecretHash != "moved" {
		t.Fatalf("secret hash %q, %v; want moved", got.SecretHash, err)
	}
}

func testHashKey(t *testing.T, s Store) {
	first := bytes.Repeat([]byte{1}, 32)
	got, err := s.HashKey(ctx(t), "client-secrets", first, t0)
	must(t, err)
	if !bytes.Equal(got, first) {
		t.Fatalf("the first key = %x", got)
	}
	// Later calls get the stored key, whatever they offer; another name
	// has its own.
	if got, err = s.HashKey(ctx(t), "client-secrets", bytes.Repeat([]byte{2}, 32), t0); err != nil || !bytes.Equal(got, first) {
		t.Fatalf("the key again = %x, %v", got, err)
	}
	if got, err = s.HashKey(ctx(t), "other", bytes.Repeat([]byte{3}, 32), t0); err != nil || got[0] != 3 {
		t.Fatalf("another name's key = %x, %v", got, err)
	}
	// Processes asking at once all get one key.
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			keys[i], _ = s.HashKey(ctx(t), "concurrent", bytes.Repeat([]byte{byte(10 + i)}, 32), t0)
		})
	}
	wg.Wait()
	for _, k := range keys {
		if len(k) != 32 || !bytes.Equal(k, keys[0]) {
			t.Fatalf("concurrent first calls got %x", keys)
		}
	}
}

func testSharingGrants(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	_, err := s.EnsureWorkspace(ctx(t), "w2", t0)
	must(t, err)
	g := store.SharingGrant{ID: "g1", WorkspaceID: "w2", ClientID: "c1", KeyHash: bytes.Repeat([]byte{7}, 32), CreatedAt: at(0)}
	must(t, s.CreateSharingGrant(ctx(t), g, operator(audit.SharingGrant, "w2")))
	dup := g
	dup.ID = "g2"
	wantErr(t, s.CreateSharingGrant(ctx(t), dup, operator(audit.SharingGrant, "w2")), store.ErrConflict)
	orphan := store.SharingGrant{ID: "g3", WorkspaceID: "w2", ClientID: "nope", KeyHash: []byte{1}, CreatedAt: t0}
	wantErr(t, s.CreateSharingGrant(ctx(t), orphan, operator(audit.SharingGrant, "w2")), store.ErrNotFound)

	got, err := s.GetSharingGrantByKeyHash(ctx(t), g.KeyHash)
	must(t, err)
	if got.ID != "g1" || got.WorkspaceID != "w2" || got.ClientID != "c1" || !got.RevokedAt.IsZero() || !got.CreatedAt.Equal(g.CreatedAt) {
		t.Fatalf("grant = %+v", got)
	}
	_, err = s.GetSharingGrantByKeyHash(ctx(t), bytes.Repeat([]byte{8}, 32))
	wantErr(t, err, store.ErrNotFound)

	must(t, s.RevokeSharingGrant(ctx(t), "g1", at(time.Minute), operator(audit.SharingRevoke, "w2")))
	must(t, s.RevokeSharingGrant(ctx(t), "g1", at(time.Hour), operator(audit.SharingRevoke, "w2")))
	got, err = s.GetSharingGrant(ctx(t), "g1")
	must(t, err)
	if !got.RevokedAt.Equal(at(time.Minute)) {
		t.Fatalf("RevokedAt = %v, want the first revocation %v", got.RevokedAt, at(time.Minute))
	}
	wantErr(t, s.RevokeSharingGrant(ctx(t), "g9", t0, operator(audit.SharingRevoke, "w2")), store.ErrNotFound)
	_, err = s.GetSharingGrant(ctx(t), "g9")
	wantErr(t, err, store.ErrNotFound)
	list, err := s.ListSharingGrants(ctx(t))
	must(t, err)
	if len(list) != 1 || list[0].ID != "g1" {
		t.Fatalf("ListSharingGrants = %+v", list)
	}
}

func hash(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func token(b byte, created time.Time) store.RefreshToken {
	return store.RefreshToken{Hash: hash(b), CreatedAt: created, ExpiresAt: created.Add(24 * time.Hour)}
}

func family(id, client, ws string) store.RefreshFamily {
	return store.RefreshFamily{ID: id, ClientID: client, WorkspaceID: ws, CreatedAt: at(0)}
}

func testRefreshRotation(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	must(t, s.CreateRefreshFamily(ctx(t), family("f1", "c1", "w1"), token(1, at(0)), ev(audit.Login)))
	f, err := s.RotateRefreshToken(ctx(t), "c1", hash(1), token(2, at(time.Hour)), at(time.Hour), ev(audit.Refresh))
	must(t, err)
	if f.ID != "f1" || f.ClientID != "c1" || f.WorkspaceID != "w1" || f.GrantID != "" {
		t.Fatalf("family = %+v", f)
	}
	_, err = s.RotateRefreshToken(ctx(t), "c1", hash(2), token(3, at(2*time.Hour)), at(2*time.Hour), ev(audit.Refresh))
	must(t, err)
	// Token 3 expires a day after it was made.
	_, err = s.RotateRefreshToken(ctx(t), "c1", hash(3), token(4, at(30*time.Hour)), at(26*time.Hour+time.Second), ev(audit.Refresh))
	wantErr(t, err, store.ErrNotFound)
	_, err = s.RotateRefreshToken(ctx(t), "c1", hash(9), token(5, at(2*time.Hour)), at(2*time.Hour), ev(audit.Refresh))
	wantErr(t, err, store.ErrNotFound)

	must(t, s.CreateRefreshFamily(ctx(t), family("f2", "c1", "w1"), token(6, at(0)), ev(audit.Login)))
	must(t, s.RevokeRefreshFamily(ctx(t), "f2", at(time.Minute)))
	_, err = s.RotateRefreshToken(ctx(t), "c1", hash(6), token(7, at(time.Hour)), at(time.Hour), ev(audit.Refresh))
	wantErr(t, err, store.ErrNotFound)
	wantErr(t, s.RevokeRefreshFamily(ctx(t), "f9", t0), store.ErrNotFound)

	// A family made with a sharing grant keeps it.
	_, err = s.EnsureWorkspace(ctx(t), "w2", t0)
	must(t, err)
	must(t, s.CreateSharingGrant(ctx(t), store.SharingGrant{ID: grant1, WorkspaceID: "w2", ClientID: "c1", KeyHash: hash(0xee), CreatedAt: t0}, operator(audit.SharingGrant, "w2")))
	shared := family("f3", "c1", "w2")
	shared.GrantID = grant1
	must(t, s.CreateRefreshFamily(ctx(t), shared, token(8, at(0)), ev(audit.Login)))
	// The rotation's record carries the family's grant, which needs a client.
	refresh := ev(audit.Refresh)
	refresh.Client = clientA
	f, err = s.RotateRefreshToken(ctx(t), "c1", hash(8), token(10, at(time.Hour)), at(time.Hour), refresh)
	must(t, err)
	if f.GrantID != grant1 || f.WorkspaceID != "w2" {
		t.Fatalf("shared family = %+v", f)
	}
}

func testRefreshReuse(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	must(t, s.CreateRefreshFamily(ctx(t), family("f1", "c1", "w1"), token(1, at(0)), ev(audit.Login)))
	must(t, s.CreateRefreshFamily(ctx(t), family("f2", "c1", "w1"), token(20, at(0)), ev(audit.Login)))
	_, err := s.RotateRefreshToken(ctx(t), "c1", hash(1), token(2, at(time.Minute)), at(time.Minute), ev(audit.Refresh))
	must(t, err)
	_, err = s.RotateRefreshToken(ctx(t), "c1", hash(1), token(3, at(2*time.Minute)), at(2*time.Minute), ev(audit.Refresh))
	wantErr(t, err, store.ErrTokenReused)
	// The reuse revoked the family: its newest token is dead too.
	_, err = s.RotateRefreshToken(ctx(t), "c1", hash(2), token(4, at(3*time.Minute)), at(3*time.Minute), ev(audit.Refresh))
	wantErr(t, err, store.ErrNotFound)
	// Another family of the same client is untouched.
	_, err = s.RotateRefreshToken(ctx(t), "c1", hash(20), token(21, at(3*time.Minute)), at(3*time.Minute), ev(audit.Refresh))
	must(t, err)
}

func testRefreshFamily(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	must(t, s.CreateRefreshFamily(ctx(t), family("f1", "c1", "w1"), token(1, at(0)), ev(audit.Login)))
	f, err := s.RefreshFamily(ctx(t), "f1")
	must(t, err)
	if f.ID != "f1" || f.ClientID != "c1" || f.WorkspaceID != "w1" || !f.CreatedAt.Equal(at(0)) || !f.RevokedAt.IsZero() {
		t.Fatalf("family = %+v", f)
	}
	must(t, s.RevokeRefreshFamily(ctx(t), "f1", at(time.Minute)))
	if f, err = s.RefreshFamily(ctx(t), "f1"); err != nil || !f.RevokedAt.Equal(at(time.Minute)) {
		t.Fatalf("revoked family = %+v, %v", f, err)
	}
	_, err = s.RefreshFamily(ctx(t), "f9")
	wantErr(t, err, store.ErrNotFound)
}

func testRefreshFamilyOf(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	must(t, s.CreateRefreshFamily(ctx(t), family("f1", "c1", "w1"), token(1, at(0)), ev(audit.Login)))
	f, err := s.RefreshFamilyOf(ctx(t), "c1", hash(1))
	must(t, err)
	if f.ID != "f1" || f.ClientID != "c1" || f.WorkspaceID != "w1" || !f.CreatedAt.Equal(at(0)) || !f.RevokedAt.IsZero() {
		t.Fatalf("family = %+v", f)
	}
	// Looking changes nothing: the token still rotates, once.
	_, err = s.RotateRefreshToken(ctx(t), "c1", hash(1), token(2, at(time.Minute)), at(time.Minute), ev(audit.Refresh))
	must(t, err)
	// A consumed token and its successor still name the family, so that a
	// caller can check the family before the rotation decides.
	for _, b := range []byte{1, 2} {
		if f, err := s.RefreshFamilyOf(ctx(t), "c1", hash(b)); err != nil || f.ID != "f1" {
			t.Fatalf("token %d: family %+v, %v", b, f, err)
		}
	}
	must(t, s.RevokeRefreshFamily(ctx(t), "f1", at(2*time.Minute)))
	f, err = s.RefreshFamilyOf(ctx(t), "c1", hash(2))
	must(t, err)
	if !f.RevokedAt.Equal(at(2 * time.Minute)) {
		t.Fatalf("revoked family = %+v", f)
	}
	_, err = s.RefreshFamilyOf(ctx(t), "c2", hash(1))
	wantErr(t, err, store.ErrNotFound)
	_, err = s.RefreshFamilyOf(ctx(t), "c1", hash(9))
	wantErr(t, err, store.ErrNotFound)
}

func testRefreshTokenClient(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	must(t, s.CreateRefreshFamily(ctx(t), family("f1", "c1", "w1"), token(1, at(0)), ev(audit.Login)))
	must(t, s.CreateRefreshFamily(ctx(t), family("f2", "c2", "w2"), token(5, at(0)), ev(audit.Login)))
	_, err := s.RotateRefreshToken(ctx(t), "c1", hash(1), token(2, at(time.Minute)), at(time.Minute), ev(audit.Refresh))
	must(t, err)
	must(t, s.RevokeRefreshFamily(ctx(t), "f2", at(time.Minute)))
	// Consumed, live and revoked tokens all name their client; looking
	// changes nothing.
	for _, tt := range []struct {
		token byte
		want  string
	}{{1, "c1"}, {2, "c1"}, {5, "c2"}} {
		if c, err := s.RefreshTokenClient(ctx(t), hash(tt.token)); err != nil || c != tt.want {
			t.Fatalf("token %d: client %q, %v; want %q", tt.token, c, err, tt.want)
		}
	}
	_, err = s.RotateRefreshToken(ctx(t), "c1", hash(2), token(3, at(2*time.Minute)), at(2*time.Minute), ev(audit.Refresh))
	must(t, err)
	_, err = s.RefreshTokenClient(ctx(t), hash(9))
	wantErr(t, err, store.ErrNotFound)
}

func testRefreshIsolation(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	must(t, s.CreateRefreshFamily(ctx(t), family("f1", "c1", "w1"), token(1, at(0)), ev(audit.Login)))
	// c2 presenting c1's token learns nothing and changes nothing, even twice
	// (which would look like reuse if the token were c2's).
	for range 2 {
		_, err := s.RotateRefreshToken(ctx(t), "c2", hash(1), token(2, at(time.Minute)), at(time.Minute), ev(audit.Refresh))
		wantErr(t, err, store.ErrNotFound)
	}
	if _, err := s.RotateRefreshToken(ctx(t), "c1", hash(1), token(3, at(time.Minute)), at(time.Minute), ev(audit.Refresh)); err != nil {
		t.Fatalf("owner's rotation after a foreign attempt: %v", err)
	}
}

func testRefreshConcurrentRotation(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	must(t, s.CreateRefreshFamily(ctx(t), family("f1", "c1", "w1"), token(1, at(0)), ev(audit.Login)))
	if ok, errs := rotateAtOnce(t, []Store{s}, hash(1), 8); ok != 1 {
		t.Fatalf("%d concurrent rotations of one token succeeded, want exactly 1 (errors %v)", ok, errs)
	}
}

// rotateAtOnce rotates the token hashing to h n times at once, attempt i on
// stores[i%len(stores)] (c1's, at minute 1), and returns how many succeeded;
// every other attempt must fail as reused or not found.
func rotateAtOnce(t *testing.T, stores []Store, h []byte, n int) (ok int, errs []error) {
	t.Helper()
	errs = make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		s := stores[i%len(stores)]
		wg.Go(func() {
			_, errs[i] = s.RotateRefreshToken(ctx(t), "c1", h, token(byte(100+i), at(time.Minute)), at(time.Minute), ev(audit.Refresh))
		})
	}
	wg.Wait()
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, store.ErrTokenReused), errors.Is(err, store.ErrNotFound):
		default:
			t.Fatalf("unexpected error %v", err)
		}
	}
	return ok, errs
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

func record(id, cc, ws, client string) store.Record {
	return store.Record{
		ID: id, CareContextID: cc, WorkspaceID: ws, ClientID: client,
		BlobKey: "ab" + id, SHA1: bytes.Repeat([]byte{9}, 20), Size: 42, ContentType: "audio/wave",
		Title: "visit.wav", Tasks: []string{"pii", "smart"}, Status: store.RecordPending, Version: 1,
		CreatedAt: at(0), UpdatedAt: at(0),
	}
}

func testRecords(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	r := record("r1", "cc1", "w1", "c1")
	must(t, s.CreateRecord(ctx(t), r, ev(audit.RecordUpload)))
	wantErr(t, s.CreateRecord(ctx(t), record("r2", "cc1", "w1", "c1"), ev(audit.RecordUpload)), store.ErrConflict)
	wantErr(t, s.CreateRecord(ctx(t), record("r3", "cc3", "nope", "c1"), ev(audit.RecordUpload)), store.ErrNotFound)
	empty := record("r4", "cc4", "w2", "c2")
	empty.Tasks = nil
	must(t, s.CreateRecord(ctx(t), empty, ev(audit.RecordUpload)))

	got, err := s.GetRecord(ctx(t), "w1", "cc1")
	must(t, err)
	if fmt.Sprint(got) != fmt.Sprint(r) {
		t.Fatalf("GetRecord = %+v, want %+v", got, r)
	}
	got, err = s.GetRecord(ctx(t), "w2", "cc4")
	must(t, err)
	if len(got.Tasks) != 0 {
		t.Fatalf("Tasks = %q, want none", got.Tasks)
	}
	_, err = s.GetRecord(ctx(t), "w2", "cc1")
	wantErr(t, err, store.ErrNotFound)
	_, err = s.GetRecord(ctx(t), "w1", "nope")
	wantErr(t, err, store.ErrNotFound)
}

func testRecordResources(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	must(t, s.CreateRecord(ctx(t), record("r1", "cc1", "w1", "c1"), ev(audit.RecordUpload)))
	batch := func(ids ...string) []store.Resource {
		var out []store.Resource
		for _, id := range ids {
			out = append(out, store.Resource{ResourceType: "Observation", ID: id, JSON: []byte(`{"resourceType":"Observation","id":"` + id + `"}`)})
		}
		return out
	}
	r, err := s.AddRecordResources(ctx(t), "cc1", batch("a", "b"), at(time.Minute), ev(audit.ResourcesSubmit))
	must(t, err)
	if r.Version != 2 || r.Status != store.RecordParsed || !r.UpdatedAt.Equal(at(time.Minute)) || !r.CreatedAt.Equal(at(0)) || r.ID != "r1" {
		t.Fatalf("after first batch: %+v", r)
	}
	r, err = s.AddRecordResources(ctx(t), "cc1", batch("c"), at(time.Hour), ev(audit.ResourcesSubmit))
	must(t, err)
	if r.Version != 3 {
		t.Fatalf("version = %d, want 3", r.Version)
	}
	_, err = s.AddRecordResources(ctx(t), "nope", batch("d"), at(time.Hour), ev(audit.ResourcesSubmit))
	wantErr(t, err, store.ErrNotFound)

	res, err := s.ListRecordResources(ctx(t), "r1")
	must(t, err)
	var ids []string
	for i, x := range res {
		if x.Seq != int64(i+1) || x.RecordID != "r1" || x.ResourceType != "Observation" || !bytes.Contains(x.JSON, []byte(x.ID)) {
			t.Fatalf("resource %d = %+v", i, x)
		}
		ids = append(ids, x.ID)
	}
	if !slices.Equal(ids, []string{"a", "b", "c"}) {
		t.Fatalf("resource ids = %q", ids)
	}
}

func testRecordAliases(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	must(t, s.CreateRecord(ctx(t), record("r1", "cc1", "w1", "c1"), ev(audit.RecordUpload)))
	must(t, s.CreateRecord(ctx(t), record("r2", "cc2", "w1", "c1"), ev(audit.RecordUpload)))
	aliases, err := s.RecordAliases(ctx(t), "cc1")
	must(t, err)
	if len(aliases) != 0 {
		t.Fatalf("aliases of a new record = %v", aliases)
	}
	_, err = s.RecordAliases(ctx(t), "nope")
	wantErr(t, err, store.ErrNotFound)

	res := func(id string, aliases ...string) store.Resource {
		return store.Resource{ResourceType: "Patient", ID: id, JSON: []byte(`{"resourceType":"Patient","id":"` + id + `"}`), Aliases: aliases}
	}
	_, err = s.AddRecordResources(ctx(t), "cc1", []store.Resource{res("a", "Patient/pt", "urn:uuid:p"), res("b")}, at(time.Minute), ev(audit.ResourcesSubmit))
	must(t, err)
	_, err = s.AddRecordResources(ctx(t), "cc1", []store.Resource{res("c", "Patient/other")}, at(2*time.Minute), ev(audit.ResourcesSubmit))
	must(t, err)
	// Another record may use the same aliases.
	_, err = s.AddRecordResources(ctx(t), "cc2", []store.Resource{res("d", "Patient/pt")}, at(time.Minute), ev(audit.ResourcesSubmit))
	must(t, err)
	want := map[string]string{"Patient/pt": "a", "urn:uuid:p": "a", "Patient/other": "c"}
	aliases, err = s.RecordAliases(ctx(t), "cc1")
	must(t, err)
	if fmt.Sprint(aliases) != fmt.Sprint(want) {
		t.Fatalf("aliases = %v, want %v", aliases, want)
	}

	// An alias the record has already is a conflict, and nothing of the
	// batch is stored.
	_, err = s.AddRecordResources(ctx(t), "cc1", []store.Resource{res("e", "Patient/new"), res("f", "Patient/pt")}, at(time.Hour), ev(audit.ResourcesSubmit))
	wantErr(t, err, store.ErrConflict)
	aliases, err = s.RecordAliases(ctx(t), "cc1")
	must(t, err)
	if fmt.Sprint(aliases) != fmt.Sprint(want) {
		t.Fatalf("aliases after a refused batch = %v, want %v", aliases, want)
	}
	got, err := s.ListRecordResources(ctx(t), "r1")
	must(t, err)
	if len(got) != 3 {
		t.Fatalf("%d resources after a refused batch, want 3", len(got))
	}
	r, err := s.GetRecord(ctx(t), "w1", "cc1")
	must(t, err)
	if r.Version != 3 {
		t.Fatalf("version after a refused batch = %d, want 3", r.Version)
	}
}

func testSubscriptions(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	sub := store.Subscription{
		ID: "s1", WorkspaceID: "w1", Endpoint: "https://example.com/hook", Protocol: "https",
		EventNames: []string{"receipt.created", "appointment.created"}, SigningKey: "0123456789abcdef",
		DeliveryFormat: store.FormatEka, Status: store.SubscriptionActive, CreatedAt: at(0),
	}
	must(t, s.CreateSubscription(ctx(t), sub, 0, ev(audit.SubscriptionCreate)))
	dup := sub
	dup.ID = "s2"
	wantErr(t, s.CreateSubscription(ctx(t), dup, 0, ev(audit.SubscriptionCreate)), store.ErrConflict)
	other := dup
	other.WorkspaceID = "w2"
	other.SigningKey, other.DeliveryFormat = "", ""
	other.EventNames = []string{"user.delete"}
	other.CreatedAt = at(time.Second)
	must(t, s.CreateSubscription(ctx(t), other, 0, ev(audit.SubscriptionCreate)))
	orphan := dup
	orphan.ID, orphan.WorkspaceID = "s3", "nope"
	wantErr(t, s.CreateSubscription(ctx(t), orphan, 0, ev(audit.SubscriptionCreate)), store.ErrNotFound)
	second := sub
	second.ID, second.Endpoint, second.Protocol, second.CreatedAt = "s4", "arn:aws:lambda:eu-west-1:123456789012:function:f", "lambda", at(time.Minute)
	must(t, s.CreateSubscription(ctx(t), second, 0, ev(audit.SubscriptionCreate)))

	list, err := s.ListSubscriptions(ctx(t), "w1")
	must(t, err)
	if len(list) != 2 || list[0].ID != "s1" || list[1].ID != "s4" {
		t.Fatalf("ListSubscriptions(w1) = %+v", list)
	}
	want := sub
	want.EventNames = []string{"appointment.created", "receipt.created"}
	if fmt.Sprint(list[0]) != fmt.Sprint(want) {
		t.Fatalf("subscription = %+v, want %+v", list[0], want)
	}
	got, err := s.GetSubscription(ctx(t), "w2", "s2")
	must(t, err)
	if got.SigningKey != "" || !slices.Equal(got.EventNames, []string{"user.delete"}) || !got.LastDeliveryAt.IsZero() || got.LastDeliveryOutcome != "" ||
		got.DeliveryFormat != store.FormatStandardWebhooks {
		t.Fatalf("GetSubscription(w2, s2) = %+v", got)
	}
	_, err = s.GetSubscription(ctx(t), "w2", "s1")
	wantErr(t, err, store.ErrNotFound)

	wantErr(t, s.DeleteSubscription(ctx(t), "w2", "s1", ev(audit.SubscriptionDelete)), store.ErrNotFound)
	if _, err := s.GetSubscription(ctx(t), "w1", "s1"); err != nil {
		t.Fatalf("a foreign delete removed the subscription: %v", err)
	}
	must(t, s.DeleteSubscription(ctx(t), "w1", "s1", ev(audit.SubscriptionDelete)))
	wantErr(t, s.DeleteSubscription(ctx(t), "w1", "s1", ev(audit.SubscriptionDelete)), store.ErrNotFound)
	list, err = s.ListSubscriptions(ctx(t), "w1")
	must(t, err)
	if len(list) != 1 || list[0].ID != "s4" {
		t.Fatalf("after delete: %+v", list)
	}
	// The endpoint is free again once deleted.
	must(t, s.CreateSubscription(ctx(t), store.Subscription{
		ID: "s5", WorkspaceID: "w1", Endpoint: sub.Endpoint, Protocol: "https",
		EventNames: []string{"user.delete"}, Status: store.SubscriptionActive, CreatedAt: at(time.Hour),
	}, 0, ev(audit.SubscriptionCreate)))
}

func testSubscriptionLimit(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	sub := func(id, ws string) store.Subscription {
		return store.Subscription{ID: id, WorkspaceID: ws, Endpoint: "https://example.com/" + id, Protocol: "https",
			EventNames: []string{"user.delete"}, Status: store.SubscriptionActive, CreatedAt: at(0)}
	}
	must(t, s.CreateSubscription(ctx(t), sub("a", "w1"), 2, ev(audit.SubscriptionCreate)))
	must(t, s.CreateSubscription(ctx(t), sub("b", "w1"), 2, ev(audit.SubscriptionCreate)))
	wantErr(t, s.CreateSubscription(ctx(t), sub("c", "w1"), 2, ev(audit.SubscriptionCreate)), store.ErrLimit)
	must(t, s.CreateSubscription(ctx(t), sub("d", "w2"), 2, ev(audit.SubscriptionCreate))) // per workspace
	must(t, s.DeleteSubscription(ctx(t), "w1", "a", ev(audit.SubscriptionDelete)))
	must(t, s.CreateSubscription(ctx(t), sub("c", "w1"), 2, ev(audit.SubscriptionCreate)))
	must(t, s.CreateSubscription(ctx(t), sub("e", "w1"), 0, ev(audit.SubscriptionCreate))) // no limit
	list, err := s.ListSubscriptions(ctx(t), "w1")
	must(t, err)
	if len(list) != 3 {
		t.Fatalf("%d subscriptions, want 3", len(list))
	}

	// Concurrent creations never exceed the limit.
	const n, limit = 8, 3
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = s.CreateSubscription(ctx(t), sub(fmt.Sprint("r", i), "w2"), limit, ev(audit.SubscriptionCreate))
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, store.ErrLimit) {
			t.Fatalf("unexpected error %v", err)
		}
	}
	list, err = s.ListSubscriptions(ctx(t), "w2")
	must(t, err)
	if len(list) != limit {
		t.Fatalf("%d subscriptions after concurrent creations with a limit of %d", len(list), limit)
	}
}
