package e2e

import (
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// plainFixture is the data of a stack of the version before secrets were
// sealed at rest (commit 0c9f54c): its backend's SQLite database and blobs,
// its key registry, and what its test handled (tests/e2e/testdata/plain-v0c9f54c,
// whose README says how it was made).
const plainFixture = "testdata/plain-v0c9f54c"

// fixtureSecrets is fixture.json: the credentials and ids the stack that
// wrote the fixture handled.
type fixtureSecrets struct {
	ClientID          string `json:"client_id"`
	ClientSecret      string `json:"client_secret"`
	Workspace         string `json:"workspace"`
	Kid               string `json:"kid"`
	Key               string `json:"key"`
	WebhookSigningKey string `json:"webhook_signing_key"`
	SubscriptionID    string `json:"subscription_id"`
	CareContextID     string `json:"care_context_id"`
}

// plainSecrets returns the fixture's secrets, and those its database
// holds in the clear: the token signing key's seed and the key of the
// client secrets' hash.
func plainSecrets(t *testing.T) (fixtureSecrets, map[string][]byte) {
	t.Helper()
	var f fixtureSecrets
	b, err := os.ReadFile(filepath.Join(plainFixture, "fixture.json"))
	if err != nil || json.Unmarshal(b, &f) != nil {
		t.Fatalf("the fixture: %v", err)
	}
	// immutable: the fixture is a file that never changes, so SQLite
	// makes no -shm or -wal beside it (tests never write tracked files).
	db, err := sql.Open("sqlite", "file:"+filepath.Join(plainFixture, "backend", "hdc.db")+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var seed, hashKey string
	if err := db.QueryRow(`SELECT seed FROM signing_keys`).Scan(&seed); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT secret FROM hash_keys`).Scan(&hashKey); err != nil {
		t.Fatal(err)
	}
	secrets := map[string][]byte{
		"the client's encryption key": []byte(f.Key), "the client's secret": []byte(f.ClientSecret),
		"the webhook signing key": []byte(f.WebhookSigningKey),
	}
	for what, h := range map[string]string{"the token signing key": seed, "the key of the client secrets' hash": hashKey} {
		if secrets[what], err = hex.DecodeString(h); err != nil {
			t.Fatal(err)
		}
	}
	return f, secrets
}

// TestUpgradeFromPlainData runs this version on the data of the version
// before it, whose secrets are in the clear: everything keeps working (the
// client logs in with its secret and encrypts with its key, its record is
// there, its subscription's deliveries are signed with its key, its audit
// trail verifies, the old records by SHA-256 and the new by MAC), the
// backend seals the database's secrets as it starts, hdc keys wrap seals
// the registry's, and then no file of the data holds any of them in the
// clear.
func TestUpgradeFromPlainData(t *testing.T) {
	t.Parallel()
	f, secrets := plainSecrets(t)
	at := hdctest.PlainSite(t)
	at.From, at.RegistryFile = plainFixture, true // its edge read the registry file
	s := hdctest.StartStackSite(t, at, nil, nil)
	c := &hdctest.APIClient{ID: f.ClientID, Secret: f.ClientSecret, Workspace: f.Workspace, Kid: f.Kid, Key: f.Key}
	s.Creds.Add("the fixture's client secret", f.ClientSecret)
	tk := s.Login(c, true, "")
	s.Retrieve(c, tk, true, f.CareContextID, []byte("the fixture's file"))

	var wrapped struct{ Keys int }
	s.RegistryChanged(func() { s.HDC(&wrapped, "keys", "wrap") })
	if wrapped.Keys != 1 {
		t.Fatalf("hdc keys wrap sealed %d keys, want 1", wrapped.Keys)
	}
	tk = s.Login(c, true, "")
	s.VerifyAudit(t, nil, nil)
	s.Stop()

	st := s.OpenSealed(t)
	_, err := st.PublishEvent(t.Context(), store.Event{ID: "00000000-0000-4000-8000-0000000000e1", WorkspaceID: f.Workspace,
		Type: "user.delete", Data: []byte(`{"user_id":"u-1"}`), CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := st.ClaimDeliveries(t.Context(), store.Claim{Owner: "test", Now: time.Now().Add(time.Second), LeaseUntil: time.Now().Add(time.Minute), Limit: 1})
	if err != nil || len(ds) != 1 || ds[0].Subscription.SigningKey != f.WebhookSigningKey {
		t.Fatalf("a delivery of the fixture's subscription: %v, %+v", err, ds)
	}
	st.Close()
	for what, secret := range secrets {
		if found := hdctest.FindInFiles(t, s.Dir, secret); len(found) > 0 {
			t.Errorf("%s is in the clear in %v", what, found)
		}
	}
}
