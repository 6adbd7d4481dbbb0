package e2e

import (
	"crypto/ed25519"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestNoSecretInTheClearAtRest runs the stack, gives it every kind of
// secret it keeps (a client's encryption key in the key plane, a
// subscription's webhook signing key, the token signing keys and the key
// of the client secrets' hash it makes itself), stops it, and searches
// every file of its data directory, the database's included, for each
// secret in the clear.
func TestNoSecretInTheClearAtRest(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	c := s.NewClient("at-rest")
	tk := s.Login(c, true, "")
	webhookKey := "whsec_" + base64.StdEncoding.EncodeToString([]byte("the at-rest test's webhook key"))
	if r := s.Send(c, true, "POST", hdctest.SubsPath, []byte(`{"endpoint":"https://hooks.example/at-rest","signing_key":"`+webhookKey+`"}`), hdctest.Bearer(tk)); r.Status != 200 {
		t.Fatalf("subscribe: %s", r)
	}
	s.Upload(c, tk, true, []byte("a record at rest"), "")
	s.Stop()

	st := s.OpenSealed(t)
	secrets := map[string][]byte{
		"the client's encryption key": []byte(c.Key),
		"the client's secret":         []byte(c.Secret),
		"the webhook signing key":     []byte(webhookKey),
	}
	keys, err := st.ListSigningKeys(t.Context())
	if err != nil || len(keys) == 0 {
		t.Fatalf("the signing keys: %v, %d", err, len(keys))
	}
	for _, k := range keys {
		secrets["the token signing key "+k.ID] = k.Seed
	}
	hashKey, err := st.HashKey(t.Context(), "client-secrets", make([]byte, 32), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	secrets["the key of the client secrets' hash"] = hashKey
	st.Close()
	for what, secret := range secrets {
		if found := hdctest.FindInFiles(t, s.Dir, secret); len(found) > 0 {
			t.Errorf("%s is in the clear in %v", what, found)
		}
	}
}

// TestDatabaseCopyMintsNoToken: someone with a copy of the database (a
// backup, a replica, a read-only role) takes the token signing key from
// it and mints an access token for another workspace's client; the edge
// refuses it. The token names a real login of that client (sid), as the
// copy shows one.
func TestDatabaseCopyMintsNoToken(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	victim := s.NewClient("victim")
	vt := s.Login(victim, false, "")
	if r := s.Send(victim, false, "POST", hdctest.SubsPath, []byte(`{"endpoint":"https://hooks.example/victim"}`), hdctest.Bearer(vt)); r.Status != 200 {
		t.Fatalf("subscribe: %s", r)
	}
	db, err := sql.Open("sqlite", filepath.Join(s.CopyDatabase(t, ""), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var kid, seedHex, family string
	if err := db.QueryRow(`SELECT id, seed FROM signing_keys ORDER BY generation DESC LIMIT 1`).Scan(&kid, &seedHex); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT id FROM refresh_families WHERE client_id = ?`, victim.ID).Scan(&family); err != nil {
		t.Fatal(err)
	}
	seed, _ := hex.DecodeString(seedHex)
	if len(seed) < ed25519.SeedSize {
		seed = append(seed, make([]byte, ed25519.SeedSize)...)
	}
	// The seed column as the key, as a stored Ed25519 seed would be.
	priv := ed25519.NewKeyFromSeed(seed[:ed25519.SeedSize])
	now := time.Now()
	forged := testkit.Sign(jwt.SigningMethodEdDSA, priv, map[string]any{"kid": kid},
		testkit.With(testkit.Claims(victim.ID, victim.Workspace, rand.Text(), now), map[string]any{"sid": family}))
	r := s.Do("GET", hdctest.SubsPath, nil, map[string]string{"Authorization": "Bearer " + forged})
	if r.Status != 401 {
		t.Fatalf("a token minted with the signing key column of a database copy: %s, want 401", r)
	}
}
