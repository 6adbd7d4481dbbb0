package opscmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/clitest"
	"github.com/health-data-connect/hdc/internal/apiclient"
)

// hdc runs hdc with args against the database in dir and returns its
// standard output, or an error carrying its standard error.
func hdc(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	res := clitest.Run(t, nil, append(args, "--data", dir)...)
	if res.Err != nil {
		return string(res.Stdout), fmt.Errorf("%v: %s", res.Err, res.Stderr)
	}
	return string(res.Stdout), nil
}

func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("output %q: %v", s, err)
	}
	return v
}

func TestClientsAndSharing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, err := hdc(t, dir, "clients", "create", "--workspace", "acme")
	if err != nil {
		t.Fatal(err)
	}
	a := decode[adminapi.Credentials](t, out)
	if a.ClientID == "" || !strings.HasPrefix(a.ClientSecret, "hdc_cs_") || a.WorkspaceID != "acme" {
		t.Fatalf("create printed %s", out)
	}
	out, _ = hdc(t, dir, "clients", "create", "--workspace", "globex")
	b := decode[adminapi.Credentials](t, out)

	out, err = hdc(t, dir, "clients", "list")
	if err != nil || strings.Contains(out, a.ClientSecret) || strings.Contains(out, "argon2") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if list := decode[[]adminapi.Client](t, out); len(list) != 2 || list[0].ClientID != a.ClientID || list[0].Status != "active" {
		t.Fatalf("list = %s", out)
	}
	for _, f := range []struct {
		args []string
		want []string
	}{
		{[]string{"--workspace", "globex"}, []string{b.ClientID}},
		{[]string{"--workspace", "acme", "--status", "active"}, []string{a.ClientID}},
		{[]string{"--status", "disabled"}, nil},
	} {
		out, err = hdc(t, dir, append([]string{"clients", "list"}, f.args...)...)
		var got []string
		for _, c := range decode[[]adminapi.Client](t, out) {
			got = append(got, c.ClientID)
		}
		if err != nil || !slices.Equal(got, f.want) {
			t.Fatalf("list %v: %v, %s", f.args, err, out)
		}
	}

	out, err = hdc(t, dir, "sharing", "grant", "--workspace", "globex", "--client", a.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	g := decode[adminapi.IssuedGrant](t, out)
	if g.GrantID == "" || !strings.HasPrefix(g.SharingKey, "hdc_sk_") || g.WorkspaceID != "globex" || g.ClientID != a.ClientID {
		t.Fatalf("grant printed %s", out)
	}
	out, _ = hdc(t, dir, "sharing", "list")
	if strings.Contains(out, g.SharingKey) || !strings.Contains(out, g.GrantID) {
		t.Fatalf("sharing list = %s", out)
	}

	// The database the CLI wrote is the server's: authenticate against it.
	auth := func(clientID, secret, key string) (identity.Principal, error) {
		plain, err := storage.OpenStore(t.Context(), "", dir)
		if err != nil {
			t.Fatal(err)
		}
		st, err := storage.Seal(t.Context(), plain, clitest.KeeperURL, zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		return identity.New(st, 1).Authenticate(t.Context(), clientID, secret, key)
	}
	if p, err := auth(a.ClientID, a.ClientSecret, g.SharingKey); err != nil || p.WorkspaceID != "globex" {
		t.Fatalf("login with the sharing key: %+v, %v", p, err)
	}
	if _, err := hdc(t, dir, "sharing", "revoke", "--grant", g.GrantID); err != nil {
		t.Fatal(err)
	}
	if _, err := auth(a.ClientID, a.ClientSecret, g.SharingKey); err == nil {
		t.Fatal("revoked sharing key still logs in")
	}
	if _, err := hdc(t, dir, "clients", "disable", "--client", b.ClientID); err != nil {
		t.Fatal(err)
	}
	if _, err := auth(b.ClientID, b.ClientSecret, ""); err == nil {
		t.Fatal("disabled client still logs in")
	}
}

func TestCommandErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"create without workspace", []string{"clients", "create"}, `"workspace" not set`},
		{"create with invalid workspace", []string{"clients", "create", "--workspace", "bad id"}, "identifiers are"},
		{"disable unknown client", []string{"clients", "disable", "--client", "nobody"}, `no client "nobody"`},
		{"revoke unknown grant", []string{"sharing", "revoke", "--grant", "nope"}, `no grant "nope"`},
		{"grant unknown workspace", []string{"sharing", "grant", "--workspace", "nope", "--client", "x"}, "not found"},
		{"unreachable database", []string{"clients", "list", "--db", "postgres://hdc@127.0.0.1:1/hdc"}, "failed to connect"},
		{"list of an unknown status", []string{"clients", "list", "--status", "gone"}, "status must be active or disabled"},
		{"malformed database URL", []string{"clients", "list", "--db", "postgres://hdc:pw@127.0.0.1:1/hdc?sslmode=bogus"}, "cannot be parsed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := hdc(t, dir, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%v: error %v, want %q", tt.args, err, tt.want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"clients", "--help"}, {"clients", "create", "--help"}, {"clients", "list", "--help"}, {"clients", "disable", "--help"},
		{"sharing", "--help"}, {"sharing", "grant", "--help"}, {"sharing", "revoke", "--help"}, {"sharing", "list", "--help"},
		{"subscriptions", "--help"}, {"subscriptions", "list", "--help"}, {"subscriptions", "get", "--help"}, {"subscriptions", "delete", "--help"}, {"clients", "limits", "--help"}, {"clients", "limits", "show", "--help"},
		{"clients", "limits", "set", "--help"}, {"clients", "limits", "clear", "--help"}, {"subscriptions", "deliveries", "--help"}, {"subscriptions", "delivery", "--help"},
		{"subscriptions", "redeliver", "--help"}, {"subscriptions", "recover", "--help"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			res := clitest.Run(t, nil, args...)
			if res.Err != nil || !bytes.Contains(res.Stdout, []byte("Usage:")) {
				t.Errorf("%v: %v\n%s%s", args, res.Err, res.Stdout, res.Stderr)
			}
		})
	}
}

// TestCredentialsOut (first deployment, finding 1): hdc clients create and
// hdc keys add and rotate write the one file a client needs, mode 0600:
// the base URL, the client's id and secret, its key (in both forms) and
// the edge's private authority; a key of another client does not go into
// it.
func TestCredentialsOut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, ca := filepath.Join(t.TempDir(), "clinic.json"), filepath.Join(t.TempDir(), "edge-ca.pem")
	if err := os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	printed := mustOut(hdc(t, dir, "clients", "create", "--workspace", "acme",
		"--credentials-out", out, "--base-url", "https://api.example.org", "--edge-ca", ca))
	created := decode[handedOver](t, printed)
	c, err := apiclient.ReadCredentials(out)
	switch {
	case err != nil:
		t.Fatal(err)
	case created.CredentialsFile != out || created.ClientID == "" || created.WorkspaceID != "acme":
		t.Fatalf("hdc clients create printed %s", printed)
	case c.ClientSecret == "" || strings.Contains(printed, c.ClientSecret) || strings.Contains(printed, "client_secret"):
		t.Fatalf("hdc clients create --credentials-out printed the secret: %s", printed)
	}
	printed = mustOut(hdc(t, dir, "keys", "add", "--client", created.ClientID, "--enc", "A256GCM", "--credentials-out", out))
	key := decode[handedOver](t, printed)
	secret := c.ClientSecret
	c, err = apiclient.ReadCredentials(out)
	switch {
	case err != nil:
		t.Fatal(err)
	case c.BaseURL != "https://api.example.org" || c.ClientID != created.ClientID || c.ClientSecret != secret ||
		c.WorkspaceID != created.WorkspaceID || !strings.Contains(c.CA, "BEGIN CERTIFICATE"):
		t.Fatalf("the credentials file: %+v", c)
	case c.Kid != key.Kid || c.EncryptionKey == "" || c.Enc != "A256GCM" || c.JWK == nil || key.CredentialsFile != out:
		t.Fatalf("the file's key: %+v, printed %s", c, printed)
	case strings.Contains(printed, c.EncryptionKey) || strings.Contains(printed, `"secret"`) || strings.Contains(printed, `"jwk"`):
		t.Fatalf("hdc keys add --credentials-out printed the key's secret: %s", printed)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the file's mode: %v, %v", fi.Mode(), err)
	}
	rotated := decode[handedOver](t, mustOut(hdc(t, dir, "keys", "rotate", "--client", created.ClientID, "--credentials-out", out)))
	if c, _ := apiclient.ReadCredentials(out); c.Kid != rotated.Kid || c.ClientSecret != secret {
		t.Fatalf("after the rotation, the file holds %+v, want key %s and the secret kept", c, rotated.Kid)
	}
	if _, err := hdc(t, dir, "clients", "create", "--workspace", "acme", "--credentials-out", out); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("a new client's credentials into an existing file: %v", err)
	}
	other := decode[adminapi.Credentials](t, mustOut(hdc(t, dir, "clients", "create", "--workspace", "acme")))
	if _, err := hdc(t, dir, "keys", "add", "--client", other.ClientID, "--credentials-out", out); err == nil || !strings.Contains(err.Error(), "not "+other.ClientID) {
		t.Fatalf("another client's key into the file: %v", err)
	}
}
