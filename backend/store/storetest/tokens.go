package storetest

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

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
