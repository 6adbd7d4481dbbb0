package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/auth"
	"github.com/health-data-connect/hdc/backend/credential"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/backend/token"
	"github.com/health-data-connect/hdc/internal/contract"
)

// flakyStore fails GetSharingGrant while failing is set, as a database
// that is briefly unreachable would, and remembers the hash of the last
// refresh token stored by a rotation.
type flakyStore struct {
	store.Store

	mu      sync.Mutex
	failing bool
	next    []byte
}

var errUnavailable = errors.New("database unavailable")

func (f *flakyStore) GetSharingGrant(ctx context.Context, id string) (store.SharingGrant, error) {
	f.mu.Lock()
	failing := f.failing
	f.mu.Unlock()
	if failing {
		return store.SharingGrant{}, errUnavailable
	}
	return f.Store.GetSharingGrant(ctx, id)
}

func (f *flakyStore) RotateRefreshToken(ctx context.Context, clientID string, hash []byte, next store.RefreshToken, now time.Time, e audit.Event) (store.RefreshFamily, error) {
	fam, err := f.Store.RotateRefreshToken(ctx, clientID, hash, next, now, e)
	if err == nil {
		f.mu.Lock()
		f.next = next.Hash
		f.mu.Unlock()
	}
	return fam, err
}

func (f *flakyStore) setFailing(v bool) { f.mu.Lock(); f.failing = v; f.mu.Unlock() }

// familyLive reports whether the family of the token the last rotation
// stored is live, by rotating that token directly in the store.
func (f *flakyStore) familyLive(t *testing.T, clientID string) bool {
	t.Helper()
	f.mu.Lock()
	hash := f.next
	f.mu.Unlock()
	now := time.Now()
	next := store.RefreshToken{Hash: credential.TokenHash(credential.NewToken("t")), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	_, err := f.Store.RotateRefreshToken(t.Context(), clientID, hash, next, now, audit.Event{At: now, Client: clientID})
	switch {
	case err == nil:
		return true
	case errors.Is(err, store.ErrNotFound):
		return false
	}
	t.Fatal(err)
	return false
}

type fixture struct {
	store   *flakyStore
	ids     *identity.Service
	handler *auth.Handler
	iss     *token.Issuer
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fs := &flakyStore{Store: st}
	ids := identity.New(fs, 1)
	iss, err := token.NewIssuer(t.Context(), st, token.Config{
		Issuer: "iss", Audience: "aud", AccessTTL: time.Minute, RotateEvery: time.Hour,
		PublishAhead: time.Minute, CheckEvery: time.Minute,
	}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	h, err := auth.New(auth.Config{
		Identity: ids, Issuer: iss, Tokens: fs, Audit: fs, Clients: fs, RefreshTTL: time.Hour,
		ByClient:  auth.NewMemoryLimiter(100, time.Minute, 100),
		ByAddress: auth.NewMemoryLimiter(100, time.Minute, 100),
		Log:       zap.NewNop(), Metrics: prometheus.NewRegistry(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{store: fs, ids: ids, handler: h, iss: iss}
}

func (f *fixture) post(t *testing.T, h http.Handler, body string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("POST", "/", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// grant creates a client of "wa" with a sharing grant to "wb".
func (f *fixture) grant(t *testing.T) (identity.Credentials, identity.Grant) {
	t.Helper()
	a, err := f.ids.CreateClient(t.Context(), audittest.Operator, "wa", identity.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ids.CreateClient(t.Context(), audittest.Operator, "wb", identity.Meta{}); err != nil {
		t.Fatal(err)
	}
	g, err := f.ids.GrantSharing(t.Context(), audittest.Operator, "wb", a.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	return a, g
}

// login logs a in to "wb" with the grant's key.
func (f *fixture) login(t *testing.T, a identity.Credentials, g identity.Grant) auth.TokenPair {
	t.Helper()
	w := f.post(t, http.HandlerFunc(f.handler.Login),
		fmt.Sprintf(`{"client_id":%q,"client_secret":%q,"sharing_key":%q}`, a.ClientID, a.ClientSecret, g.SharingKey))
	var pair auth.TokenPair
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &pair) != nil {
		t.Fatalf("login: %d %s", w.Code, w.Body)
	}
	return pair
}

func (f *fixture) refresh(t *testing.T, clientID string, pair auth.TokenPair) *httptest.ResponseRecorder {
	t.Helper()
	return f.post(t, web.RequireCaller(http.HandlerFunc(f.handler.Refresh)),
		fmt.Sprintf(`{"refresh_token":%q}`, pair.RefreshToken),
		contract.HeaderClientID, clientID, contract.HeaderWorkspaceID, "wb", "Client-Id", clientID)
}

// TestRefreshKeepsFamilyOnStoreFailure: a store failure while checking the
// sharing grant is the server's, answered 500, and consumes nothing: the
// client's retry with the same refresh token succeeds (it used to be taken
// for a reuse and revoke the login). Only a grant that is really gone
// revokes the login.
func TestRefreshKeepsFamilyOnStoreFailure(t *testing.T) {
	f := newFixture(t)
	a, g := f.grant(t)
	pair := f.login(t, a, g)

	f.store.setFailing(true)
	if w := f.refresh(t, a.ClientID, pair); w.Code != http.StatusInternalServerError {
		t.Fatalf("refresh with the store failing: %d %s", w.Code, w.Body)
	}
	f.store.setFailing(false)
	w := f.refresh(t, a.ClientID, pair)
	var next auth.TokenPair
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &next) != nil || next.RefreshToken == pair.RefreshToken {
		t.Fatalf("retry after the store came back: %d %s", w.Code, w.Body)
	}
	// The retry rotated the token as usual: the old one is spent.
	if w := f.refresh(t, a.ClientID, pair); w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "invalid_refresh_token") {
		t.Fatalf("the spent token again: %d %s", w.Code, w.Body)
	}

	pair = f.login(t, a, g)
	if err := f.ids.RevokeSharing(t.Context(), audittest.Operator, g.GrantID); err != nil {
		t.Fatal(err)
	}
	if w := f.refresh(t, a.ClientID, pair); w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "invalid_sharing_key") {
		t.Fatalf("refresh after the grant was revoked: %d %s", w.Code, w.Body)
	}
	if f.store.familyLive(t, a.ClientID) {
		t.Fatal("the family of a revoked grant is still live")
	}
}
