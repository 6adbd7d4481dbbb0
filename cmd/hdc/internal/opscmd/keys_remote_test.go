package opscmd

import (
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/admin/admintest"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/clitest"
)

// TestKeysRemote: hdc keys list, rotate and retire through the Admin API
// (--admin) print what they print on the database directly, refusals
// included; a change through the API is recorded in the name of the
// certificate's person.
func TestKeysRemote(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := decode[adminapi.Credentials](t, mustOut(hdc(t, dir, "clients", "create", "--workspace", "acme"))).ClientID
	st, err := storage.Database{DataDir: dir, Keeper: clitest.KeeperURL}.Open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	api := admintest.ServeStore(t, st)
	remote := func(args ...string) (string, error) { return hdc(t, dir, append(args, api.Args()...)...) }

	added := decode[adminapi.IssuedKey](t, mustOut(remote("keys", "add", "--client", c, "--kid", "k-remote", "--enc", "A256GCM")))
	if added.Kid != "k-remote" || added.Secret == "" || added.JWK.K != added.Secret {
		t.Fatalf("keys add --admin printed %+v", added)
	}
	mustOut(hdc(t, dir, "keys", "add", "--client", c, "--kid", "k-direct", "--enc", "A256GCM"))
	rs, err := st.ListAudit(t.Context(), store.AuditFilter{Workspace: "acme", Entity: "k-remote"})
	if err != nil || len(rs) != 1 || rs[0].Action != audit.KeyAdd || rs[0].Person.Name != admintest.Operator || rs[0].Person.Direct {
		t.Fatalf("k-remote's record: %+v, %v; want alice's", rs, err)
	}
	same := [][]string{
		{"keys", "list"},
		{"keys", "list", "--json"},
		{"keys", "list", "--client", c},
		{"keys", "rotate", "--client", c, "--dry-run"},
		{"keys", "rotate", "--client", c, "--enc", "A128CBC-HS256", "--dry-run"},
		{"keys", "retire", "--kid", "k-direct", "--dry-run"},
		{"keys", "retire", "--kid", "k-none"},
		{"keys", "rotate", "--client", "nobody"},
	}
	for _, args := range same {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			direct, derr := hdc(t, dir, args...)
			api, aerr := remote(args...)
			if direct != api || (derr == nil) != (aerr == nil) || derr != nil && derr.Error() != aerr.Error() {
				t.Fatalf("direct printed %q (%v), through the API %q (%v)", direct, derr, api, aerr)
			}
		})
	}
	rotated := decode[adminapi.IssuedKey](t, mustOut(remote("keys", "rotate", "--client", c)))
	if rotated.Secret == "" || rotated.Enc != "A256GCM" {
		t.Fatalf("keys rotate --admin printed %+v; want a new A256GCM key", rotated)
	}
	for _, args := range [][]string{{"keys", "retire", "--kid", rotated.Kid}, {"keys", "rotate", "--client", c, "--enc", "A128CBC-HS256"}} {
		_, derr := hdc(t, dir, args...)
		_, aerr := remote(args...)
		if derr == nil || aerr == nil || derr.Error() != aerr.Error() {
			t.Fatalf("%v: direct refused with %v, the API with %v; want the same refusal", args, derr, aerr)
		}
	}
	retired := decode[map[string]string](t, mustOut(remote("keys", "retire", "--kid", "k-remote")))
	if len(retired) != 2 || retired["kid"] != "k-remote" || retired["status"] != "retired" {
		t.Fatalf("retire through the API printed %v", retired)
	}
	if _, err := remote("keys", "list", "--registry", dir+"/keys.json"); err == nil || !strings.Contains(err.Error(), "drop --admin") {
		t.Fatalf("keys list --registry --admin: %v, want a refusal", err)
	}
}
