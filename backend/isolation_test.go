package backend

import (
	"bytes"
	"context"
	"net/url"
	"testing"

	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/auth"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/contract"
)

// TestTenantIsolation attempts every operation of one workspace with the
// identity of another and checks each is refused and changes nothing, and
// that a sharing grant opens exactly the workspace it names.
func TestTenantIsolation(t *testing.T) {
	h := start(t, nil)
	ctx := context.Background()
	alice := h.client("alpha") // workspace alpha
	bob := h.client("bravo")   // workspace bravo
	carol := h.client("charlie")
	grant, err := h.srv.Identity().GrantSharing(ctx, audittest.Operator, "alpha", carol.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	alicePair, bobPair := h.login(alice, ""), h.login(bob, "")
	asAlice, asBob := h.as(alicePair), h.as(bobPair)

	recA := h.upload(asAlice, "alpha.wav", wav, "")
	recB := h.upload(asBob, "bravo.wav", wav, "")
	var subA webhook.Registered
	h.postJSON(contract.PathSubscriptions, `{"endpoint":"https://alpha.example/hook"}`, asAlice...).json(t, &subA)

	// Records: another workspace's record is exactly as absent as a missing one.
	missing := h.do("GET", h.public+contract.PathRetrieve+"?identifier=00000000-0000-4000-8000-000000000000", nil, asBob...)
	foreign := h.do("GET", h.public+contract.PathRetrieve+"?identifier="+url.QueryEscape(recA.CareContextID), nil, asBob...)
	wantProblem(t, foreign, 404, "not_found")
	if !bytes.Equal(missing.body, foreign.body) {
		t.Fatalf("a foreign record answers differently from a missing one:\n%s\n%s", missing.body, foreign.body)
	}

	// Webhooks: bob sees none of alice's, cannot delete them, and may
	// register the same endpoint in his own workspace without learning of hers.
	var list webhook.List
	h.do("GET", h.public+contract.PathSubscriptions, nil, asBob...).json(t, &list)
	if len(list.Subscriptions) != 0 {
		t.Fatalf("bob lists %+v", list.Subscriptions)
	}
	wantProblem(t, h.do("DELETE", h.public+contract.PathSubscriptions+"/"+subA.ID, nil, asBob...), 404, "not_found")
	h.do("GET", h.public+contract.PathSubscriptions, nil, asAlice...).json(t, &list)
	if len(list.Subscriptions) != 1 || list.Subscriptions[0].ID != subA.ID {
		t.Fatalf("alice's subscriptions after bob's delete: %+v", list.Subscriptions)
	}
	if res := h.postJSON(contract.PathSubscriptions, `{"endpoint":"https://alpha.example/hook"}`, asBob...); res.StatusCode != 200 {
		t.Fatalf("same endpoint in another workspace: %d %s", res.StatusCode, res.body)
	}

	// Refresh tokens: bob presenting alice's, twice, is refused and neither
	// consumes it nor trips reuse detection on her family.
	for range 2 {
		res := h.postJSON(contract.PathRefresh, map[string]string{"refresh_token": alicePair.RefreshToken},
			append(asBob, "Client-Id", bob.ClientID)...)
		wantProblem(t, res, 401, "invalid_refresh_token")
	}
	res := h.postJSON(contract.PathRefresh, map[string]string{"refresh_token": alicePair.RefreshToken}, append(asAlice, "Client-Id", alice.ClientID)...)
	if res.StatusCode != 200 {
		t.Fatalf("alice's refresh after bob's attempts: %d %s", res.StatusCode, res.body)
	}
	// Bob naming alice in Client-Id while holding his own token is refused.
	wantProblem(t, h.postJSON(contract.PathRefresh, map[string]string{"refresh_token": bobPair.RefreshToken}, append(asBob, "Client-Id", alice.ClientID)...), 401, "client_mismatch")

	// Sharing keys: carol's key does not work for bob.
	wantProblem(t, h.postJSON(contract.PathLogin, map[string]string{"client_id": bob.ClientID, "client_secret": bob.ClientSecret, "sharing_key": grant.SharingKey}), 401, "invalid_sharing_key")

	// The grant opens exactly alpha: carol sees alice's record and
	// subscription, not bob's record; without the key she sees neither.
	shared := h.as(h.login(carol, grant.SharingKey))
	if doc := h.retrieve(shared, recA.CareContextID); doc.Composition == nil {
		t.Fatal("no document through the grant")
	}
	wantProblem(t, h.do("GET", h.public+contract.PathRetrieve+"?identifier="+url.QueryEscape(recB.CareContextID), nil, shared...), 404, "not_found")
	h.do("GET", h.public+contract.PathSubscriptions, nil, shared...).json(t, &list)
	if len(list.Subscriptions) != 1 || list.Subscriptions[0].ID != subA.ID {
		t.Fatalf("carol (shared) lists %+v", list.Subscriptions)
	}
	own := h.as(h.login(carol, ""))
	wantProblem(t, h.do("GET", h.public+contract.PathRetrieve+"?identifier="+url.QueryEscape(recA.CareContextID), nil, own...), 404, "not_found")
	h.do("GET", h.public+contract.PathSubscriptions, nil, own...).json(t, &list)
	if len(list.Subscriptions) != 0 {
		t.Fatalf("carol (own workspace) lists %+v", list.Subscriptions)
	}
	// Uploads land in the token's workspace: carol's shared upload is alpha's.
	recC := h.upload(shared, "c.wav", wav, "")
	h.retrieve(asAlice, recC.CareContextID)
	wantProblem(t, h.do("GET", h.public+contract.PathRetrieve+"?identifier="+url.QueryEscape(recC.CareContextID), nil, own...), 404, "not_found")

	// Identity headers naming a workspace that does not exist create nothing.
	ghost := []string{contract.HeaderClientID, bob.ClientID, contract.HeaderWorkspaceID, "ghost"}
	body, ct := multipartBody(t, "g.wav", wav)
	wantProblem(t, h.do("POST", h.public+contract.PathUpload, body, append([]string{"Content-Type", ct}, ghost...)...), 401, "unauthenticated")
	wantProblem(t, h.postJSON(contract.PathSubscriptions, `{"endpoint":"https://ghost.example/hook"}`, ghost...), 401, "unauthenticated")

	// Refreshing a shared login keeps the shared workspace.
	sharedPair := h.login(carol, grant.SharingKey)
	res = h.postJSON(contract.PathRefresh, map[string]string{"refresh_token": sharedPair.RefreshToken}, append(h.as(sharedPair), "Client-Id", carol.ClientID)...)
	var refreshed auth.TokenPair
	res.json(t, &refreshed)
	if cl := h.verify(refreshed.AccessToken, false); cl.WS != "alpha" {
		t.Fatalf("refreshed shared token acts in %q", cl.WS)
	}
}
