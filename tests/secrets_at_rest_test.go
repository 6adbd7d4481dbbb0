package tests

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend"
	"github.com/health-data-connect/hdc/backend/sealed"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// stop stops the stack's processes, as at the end of the test: gracefully,
// so that the backend writes its last audit checkpoint and closes its
// database.
func (s *stack) stop() {
	for _, p := range s.procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		<-p.done
	}
}

// openSealed opens the stack's SQLite database with its keeper, as the
// backend does. The backend must have stopped.
func (s *stack) openSealed(t *testing.T) *sealed.Store {
	t.Helper()
	plain, err := sqlite.Open(t.Context(), filepath.Join(s.dir, "backend", "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := backend.Seal(t.Context(), plain, s.keeper, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// secretForms returns secret in the forms a file could hold it in.
func secretForms(secret []byte) [][]byte {
	return [][]byte{secret, []byte(hex.EncodeToString(secret)), []byte(base64.StdEncoding.EncodeToString(secret)),
		[]byte(base64.RawURLEncoding.EncodeToString(secret))}
}

// findInFiles returns the files under dir that hold one of the forms of
// secret.
func findInFiles(t *testing.T, dir string, secret []byte) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, form := range secretForms(secret) {
			if bytes.Contains(data, form) {
				found = append(found, path)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestNoSecretInTheClearAtRest runs the stack, gives it every kind of
// secret it keeps (a client's encryption key in the key plane, a
// subscription's webhook signing key, the token signing keys and the key
// of the client secrets' hash it makes itself), stops it, and searches
// every file of its data directory, the database's included, for each
// secret in the clear.
func TestNoSecretInTheClearAtRest(t *testing.T) {
	s := startStack(t)
	c := s.newClient("at-rest")
	tk := s.login(c, true, "")
	webhookKey := "whsec_" + base64.StdEncoding.EncodeToString([]byte("the at-rest test's webhook key"))
	if r := s.send(c, true, "POST", subsPath, []byte(`{"endpoint":"https://hooks.example/at-rest","signing_key":"`+webhookKey+`"}`), bearer(tk)); r.status != 200 {
		t.Fatalf("subscribe: %s", r)
	}
	s.upload(c, tk, true, []byte("a record at rest"), "")
	s.stop()

	st := s.openSealed(t)
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
		if found := findInFiles(t, s.dir, secret); len(found) > 0 {
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
	s := startStack(t)
	victim := s.newClient("victim")
	vt := s.login(victim, false, "")
	if r := s.send(victim, false, "POST", subsPath, []byte(`{"endpoint":"https://hooks.example/victim"}`), bearer(vt)); r.status != 200 {
		t.Fatalf("subscribe: %s", r)
	}
	db, err := sql.Open("sqlite", filepath.Join(s.copyDatabase(t, ""), "hdc.db"))
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
	r := s.do("GET", subsPath, nil, map[string]string{"Authorization": "Bearer " + forged})
	if r.status != 401 {
		t.Fatalf("a token minted with the signing key column of a database copy: %s, want 401", r)
	}
}
