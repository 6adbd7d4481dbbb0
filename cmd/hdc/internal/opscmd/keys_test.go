package opscmd

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/clitest"
	"github.com/health-data-connect/hdc/internal/apiclient"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/privatefile"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

func TestKeysLifecycle(t *testing.T) {
	t.Parallel()
	reg := filepath.Join(t.TempDir(), "keys.json")
	r := clitest.Run(t, nil, "keys", "add", "--registry", reg, "--client", "c1", "--kid", "k-one", "--secret", "0123456789abcdef")
	if r.Err != nil {
		t.Fatalf("add: %v\n%s", r.Err, r.Stderr)
	}
	var added adminapi.IssuedKey
	if err := json.Unmarshal(r.Stdout, &added); err != nil {
		t.Fatal(err)
	}
	// The JWK's k is the shared string written twice, the key's 32 bytes.
	jwkOne := clientkey.JWK{Kty: "oct", Kid: "k-one", Enc: "A128CBC-HS256", K: "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY"}
	if added != (adminapi.IssuedKey{Kid: "k-one", ClientID: "c1", Secret: "0123456789abcdef", Enc: "A128CBC-HS256", JWK: jwkOne}) {
		t.Fatalf("add printed %+v", added)
	}

	r = clitest.Run(t, nil, "keys", "rotate", "--registry", reg, "--client", "c1")
	var rotated adminapi.IssuedKey
	if r.Err != nil || json.Unmarshal(r.Stdout, &rotated) != nil || len(rotated.Secret) != 16 || rotated.Kid == "k-one" {
		t.Fatalf("rotate: %v %s %s", r.Err, r.Stdout, r.Stderr)
	}

	r = clitest.Run(t, nil, "keys", "list", "--registry", reg, "--json")
	if r.Err != nil {
		t.Fatalf("list: %v %s", r.Err, r.Stderr)
	}
	if strings.Contains(string(r.Stdout), "0123456789abcdef") || strings.Contains(string(r.Stdout), rotated.Secret) {
		t.Fatal("list printed a secret")
	}
	var listed []clientkey.Listed
	if err := json.Unmarshal(r.Stdout, &listed); err != nil {
		t.Fatal(err)
	}
	status := map[string]clientkey.Status{}
	for _, k := range listed {
		status[k.Kid] = k.Status
	}
	if status["k-one"] != clientkey.Retiring || status[rotated.Kid] != clientkey.Active {
		t.Fatalf("after rotate: %v", status)
	}

	if r = clitest.Run(t, nil, "keys", "retire", "--registry", reg, "--kid", "k-one"); r.Err != nil {
		t.Fatalf("retire: %v %s", r.Err, r.Stderr)
	}
	r = clitest.Run(t, nil, "keys", "list", "--registry", reg)
	if r.Err != nil || !strings.Contains(string(r.Stdout), "retired") || strings.Contains(string(r.Stdout), rotated.Secret) {
		t.Fatalf("list table: %v\n%s", r.Err, r.Stdout)
	}

	failures := []struct {
		name string
		args []string
		want string
	}{
		{"short secret", []string{"keys", "add", "--registry", reg, "--client", "c2", "--secret", "short"}, "exactly 16 bytes"},
		{"duplicate kid", []string{"keys", "add", "--registry", reg, "--client", "c2", "--kid", "k-one"}, "already exists"},
		{"bad kid", []string{"keys", "add", "--registry", reg, "--client", "c2", "--kid", "k one"}, "kid must be"},
		{"no client", []string{"keys", "add", "--registry", reg}, "client"},
		{"wrap without a registry", []string{"keys", "wrap", "--data", t.TempDir()}, "--registry"},
		{"rotate unknown client", []string{"keys", "rotate", "--registry", reg, "--client", "nobody"}, "no keys"},
		{"retire unknown kid", []string{"keys", "retire", "--registry", reg, "--kid", "nope"}, "no key"},
	}
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			r := clitest.Run(t, nil, f.args...)
			if r.Err == nil || !strings.Contains(string(r.Stderr), f.want) {
				t.Fatalf("err = %v, stderr %q; want failure mentioning %q", r.Err, r.Stderr, f.want)
			}
			if strings.Contains(string(r.Stderr), "0123456789abcdef") {
				t.Fatal("an error message shows a secret")
			}
		})
	}
}

// TestKeysAddConcurrentProcesses runs 20 hdc processes adding keys to one
// file at once: every key must land and the file must stay valid.
func TestKeysAddConcurrentProcesses(t *testing.T) {
	t.Parallel()
	reg := filepath.Join(t.TempDir(), "keys.json")
	const n = 20
	var wg sync.WaitGroup
	results := make([]clitest.Result, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = clitest.Run(t, nil, "keys", "add", "--registry", reg, "--client", fmt.Sprintf("client-%d", i))
		}()
	}
	wg.Wait()
	kids := map[string]bool{}
	for i, r := range results {
		var k adminapi.IssuedKey
		if r.Err != nil || json.Unmarshal(r.Stdout, &k) != nil {
			t.Fatalf("process %d: %v %s", i, r.Err, r.Stderr)
		}
		kids[k.Kid] = true
	}
	reg2, err := registryfile.Load(reg, testSealer(t))
	if err != nil {
		t.Fatalf("the file is not valid after concurrent adds: %v", err)
	}
	if reg2.Len() != n || len(kids) != n {
		t.Fatalf("%d keys in the file, %d distinct kids printed; want %d", reg2.Len(), len(kids), n)
	}
	for kid := range kids {
		if _, ok := reg2.Lookup(kid); !ok {
			t.Fatalf("kid %s printed but not in the file", kid)
		}
	}
}

// TestKeysRotateKeepsDemoCredentials: rotating the demo client's key
// rewrites the demo credentials hdc up wrote next to the registry, so that
// hdc call --encrypt goes on working; another client's rotation leaves them.
func TestKeysRotateKeepsDemoCredentials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reg, credsPath := filepath.Join(dir, "keys.json"), filepath.Join(dir, "demo-credentials.json")
	demo := apiclient.Credentials{BaseURL: "http://127.0.0.1:8080", ClientID: "c-demo", ClientSecret: "hdc_cs_x",
		Kid: "k-demo", EncryptionKey: "0123456789abcdef", WorkspaceID: "demo"}
	b, _ := json.Marshal(demo)
	if err := privatefile.Write(credsPath, b); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"c-demo", "c-other"} {
		if r := clitest.Run(t, nil, "keys", "add", "--registry", reg, "--client", c); r.Err != nil {
			t.Fatalf("add: %v %s", r.Err, r.Stderr)
		}
	}
	readCreds := func() apiclient.Credentials {
		t.Helper()
		var c apiclient.Credentials
		b, err := os.ReadFile(credsPath)
		if err != nil || json.Unmarshal(b, &c) != nil {
			t.Fatalf("demo credentials: %v %s", err, b)
		}
		return c
	}

	if r := clitest.Run(t, nil, "keys", "rotate", "--registry", reg, "--client", "c-other"); r.Err != nil || readCreds() != demo {
		t.Fatalf("rotating another client changed the demo credentials: %v %+v", r.Err, readCreds())
	}
	r := clitest.Run(t, nil, "keys", "rotate", "--registry", reg, "--client", "c-demo")
	var rotated adminapi.IssuedKey
	if r.Err != nil || json.Unmarshal(r.Stdout, &rotated) != nil {
		t.Fatalf("rotate: %v %s %s", r.Err, r.Stdout, r.Stderr)
	}
	want := demo
	want.Kid, want.EncryptionKey = rotated.Kid, rotated.Secret
	if got := readCreds(); got != want {
		t.Fatalf("demo credentials after rotate = %+v, want %+v", got, want)
	}
	if fi, _ := os.Stat(credsPath); fi.Mode().Perm() != 0o600 {
		t.Fatalf("demo credentials mode %v", fi.Mode())
	}
	if !strings.Contains(string(r.Stderr), credsPath) {
		t.Fatalf("rotate did not say it updated %s: %s", credsPath, r.Stderr)
	}
}

// TestKeysAddWarnsOfUnknownClient: keys add warns when the backend's
// database is there and does not know the client as an active one, and
// adds the key all the same; without a database it does not warn of the
// client, says that the change is not audited, and creates no database.
func TestKeysAddWarnsOfUnknownClient(t *testing.T) {
	t.Parallel()
	withDB := t.TempDir()
	out, err := hdc(t, withDB, "clients", "create", "--workspace", "acme")
	if err != nil {
		t.Fatal(err)
	}
	known := decode[adminapi.Credentials](t, out).ClientID
	if out, err = hdc(t, withDB, "clients", "create", "--workspace", "acme"); err != nil {
		t.Fatal(err)
	}
	disabled := decode[adminapi.Credentials](t, out).ClientID
	if _, err := hdc(t, withDB, "clients", "disable", "--client", disabled); err != nil {
		t.Fatal(err)
	}
	noDB := t.TempDir()

	tests := []struct {
		name, data, client string
		warn               bool
	}{
		{"known client", withDB, known, false},
		{"unknown client", withDB, "c-typo", true},
		{"disabled client", withDB, disabled, true},
		{"no database", noDB, "c-anything", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := filepath.Join(t.TempDir(), "keys.json")
			r := clitest.Run(t, nil, "keys", "add", "--registry", reg, "--client", tt.client, "--data", tt.data)
			if r.Err != nil {
				t.Fatalf("add: %v %s", r.Err, r.Stderr)
			}
			if warned := strings.Contains(string(r.Stderr), "has no active client"); warned != tt.warn {
				t.Fatalf("warned = %v, want %v: %s", warned, tt.warn, r.Stderr)
			}
			if unaudited := strings.Contains(string(r.Stderr), "not in the audit trail"); unaudited != (tt.data == noDB) {
				t.Fatalf("said it is not audited: %v, want %v: %s", unaudited, tt.data == noDB, r.Stderr)
			}
			if k, err := registryfile.Load(reg, testSealer(t)); err != nil || k.Len() != 1 {
				t.Fatalf("the key was not added: %v", err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(noDB, "hdc.db")); !os.IsNotExist(err) {
		t.Fatalf("keys add created a database: %v", err)
	}
}

// TestKeeperInitAndKeysWrap: hdc keeper init makes a key file once and
// prints its URL; hdc keys wrap seals a registry of plain secrets under it,
// keeping every key.
func TestKeeperInitAndKeysWrap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "keeper.key")
	r := clitest.Run(t, nil, "keeper", "init", "--file", file)
	url := strings.TrimSpace(string(r.Stdout))
	if r.Err != nil || url != "keyfile://"+file {
		t.Fatalf("keeper init: %v %q %s", r.Err, url, r.Stderr)
	}
	before, _ := os.ReadFile(file)
	if r := clitest.Run(t, nil, "keeper", "init", "--file", file); r.Err != nil {
		t.Fatalf("keeper init again: %v %s", r.Err, r.Stderr)
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Fatal("keeper init replaced a key file")
	}
	reg := filepath.Join(dir, "keys.json")
	plain := `{"keys":[{"kid":"k1","client_id":"c1","secret":"0123456789abcdef","status":"active","created_at":"2026-11-25T00:00:00Z"}]}`
	if err := privatefile.Write(reg, []byte(plain)); err != nil {
		t.Fatal(err)
	}
	r = clitest.Run(t, nil, "keys", "wrap", "--registry", reg, "--keeper", url, "--data", dir)
	var wrapped struct{ Keys int }
	if r.Err != nil || json.Unmarshal(r.Stdout, &wrapped) != nil || wrapped.Keys != 1 {
		t.Fatalf("keys wrap: %v %s %s", r.Err, r.Stdout, r.Stderr)
	}
	if data, _ := os.ReadFile(reg); strings.Contains(string(data), "0123456789abcdef") {
		t.Fatal("the secret is still in the clear")
	}
	k, err := keeper.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	got, err := registryfile.Load(reg, registryfile.NewSealer(k))
	if key, ok := got.Lookup("k1"); err != nil || !ok || key.Secret != "0123456789abcdef" {
		t.Fatalf("the wrapped registry: %v", err)
	}
}

// TestKeysInDatabase runs the keys commands against the backend's
// database: add, rotate, list and retire change the key plane and its
// audit trail; import moves a registry file in, keeping every kid, secret
// and status; mistakes fail clearly and change nothing.
func TestKeysInDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c1 := decode[adminapi.Credentials](t, mustOut(hdc(t, dir, "clients", "create", "--workspace", "acme"))).ClientID
	c2 := decode[adminapi.Credentials](t, mustOut(hdc(t, dir, "clients", "create", "--workspace", "acme"))).ClientID
	added := decode[adminapi.IssuedKey](t, mustOut(hdc(t, dir, "keys", "add", "--client", c1, "--kid", "k-one", "--secret", "0123456789abcdef")))
	jwkOne := clientkey.JWK{Kty: "oct", Kid: "k-one", Enc: "A128CBC-HS256", K: "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY"}
	if added != (adminapi.IssuedKey{Kid: "k-one", ClientID: c1, Secret: "0123456789abcdef", Enc: "A128CBC-HS256", JWK: jwkOne}) {
		t.Fatalf("add printed %+v", added)
	}
	rotated := decode[adminapi.IssuedKey](t, mustOut(hdc(t, dir, "keys", "rotate", "--client", c1)))
	mustOut(hdc(t, dir, "keys", "retire", "--kid", "k-one"))

	// A registry file of another installation, moved in.
	reg := filepath.Join(t.TempDir(), "keys.json")
	for _, args := range [][]string{
		{"keys", "add", "--registry", reg, "--client", "c-file", "--kid", "k-file-1", "--secret", "fedcba9876543210"},
		{"keys", "rotate", "--registry", reg, "--client", "c-file"},
	} {
		if r := clitest.Run(t, nil, args...); r.Err != nil {
			t.Fatalf("%v: %v %s", args, r.Err, r.Stderr)
		}
	}
	if got := decode[map[string]int](t, mustOut(hdc(t, dir, "keys", "import", reg))); got["keys"] != 2 {
		t.Fatalf("import printed %v", got)
	}
	listed := decode[[]clientkey.Listed](t, mustOut(hdc(t, dir, "keys", "list", "--json")))
	status := map[string]clientkey.Status{}
	for _, k := range listed {
		status[k.Kid] = k.Status
	}
	if len(status) != 4 || status["k-one"] != clientkey.Retired || status[rotated.Kid] != clientkey.Active ||
		status["k-file-1"] != clientkey.Retiring {
		t.Fatalf("listed %v", status)
	}
	if own := decode[[]clientkey.Listed](t, mustOut(hdc(t, dir, "keys", "list", "--json", "--client", c1))); len(own) != 2 {
		t.Fatalf("c1's keys: %+v", own)
	}

	failures := []struct {
		name string
		args []string
		want string
	}{
		{"unknown client", []string{"keys", "add", "--client", "c-typo"}, "no client"},
		{"short secret", []string{"keys", "add", "--client", c1, "--secret", "short"}, "exactly 16 bytes"},
		{"duplicate kid", []string{"keys", "add", "--client", c1, "--kid", "k-one"}, "already exists"},
		{"bad kid", []string{"keys", "add", "--client", c1, "--kid", "k one"}, "kid must be"},
		{"rotate an unknown client", []string{"keys", "rotate", "--client", "c-file"}, "no client"},
		{"rotate a client without keys", []string{"keys", "rotate", "--client", c2}, "has no keys"},
		{"retire unknown kid", []string{"keys", "retire", "--kid", "nope"}, "no key"},
		{"import again", []string{"keys", "import", reg}, "nothing was imported"},
		{"import with a registry", []string{"keys", "import", reg, "--registry", reg}, "drop --registry"},
	}
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			_, err := hdc(t, dir, f.args...)
			if err == nil || !strings.Contains(err.Error(), f.want) || strings.Contains(err.Error(), "0123456789abcdef") {
				t.Fatalf("err = %v; want a failure mentioning %q, without a secret", err, f.want)
			}
		})
	}
	if n := len(decode[[]clientkey.Listed](t, mustOut(hdc(t, dir, "keys", "list", "--json")))); n != 4 {
		t.Fatalf("the failures changed the keys: %d", n)
	}
	out := mustOut(hdc(t, dir, "audit", "list", "--workspace", "acme"))
	for _, action := range []string{"key_add", "key_rotate", "key_retire"} {
		if !strings.Contains(out, action) {
			t.Errorf("acme's trail has no %s:\n%s", action, out)
		}
	}
}

// TestKeysOfEachKind: --enc A256GCM makes a 32-byte key, printed as a JWK
// too, and --require-fresh a key whose envelopes need iat and jti; a
// rotation keeps the kind of the key it replaces, and one to a weaker kind
// needs --allow-weaker (the fourth review's finding 11: the runbook's
// rotate turned an A256GCM key into an A128CBC-HS256 one without
// freshness, silently); list shows each key's enc; an enc that is not the
// transport's, or a weaker rotation not allowed, is refused and changes
// nothing.
func TestKeysOfEachKind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := decode[adminapi.Credentials](t, mustOut(hdc(t, dir, "clients", "create", "--workspace", "acme"))).ClientID
	first := decode[adminapi.IssuedKey](t, mustOut(hdc(t, dir, "keys", "add", "--client", c, "--enc", "A256GCM")))
	gcm := decode[adminapi.IssuedKey](t, mustOut(hdc(t, dir, "keys", "rotate", "--client", c))) // the runbook's command
	raw, err := base64.RawURLEncoding.DecodeString(gcm.Secret)
	switch {
	case err != nil || len(raw) != 32:
		t.Fatalf("an A256GCM secret of %d bytes (%v)", len(raw), err)
	case gcm.Enc != "A256GCM" || !gcm.RequireFresh:
		t.Fatalf("the rotation of an A256GCM key printed %+v", gcm)
	case gcm.JWK != (clientkey.JWK{Kty: "oct", Kid: gcm.Kid, Enc: "A256GCM", K: gcm.Secret}):
		t.Fatalf("the JWK: %+v", gcm.JWK)
	}
	mustOut(hdc(t, dir, "keys", "retire", "--kid", first.Kid))
	for _, tt := range []struct{ flag, says string }{{"--enc=A128CBC-HS256", "--allow-weaker"}, {"--require-fresh=false", "always name iat and jti"}} {
		r := clitest.Run(t, nil, "keys", "rotate", "--data", dir, "--client", c, tt.flag)
		if r.Err == nil || !strings.Contains(string(r.Stderr), tt.says) {
			t.Fatalf("rotate %s of an A256GCM key: %v %s, want a refusal saying %q", tt.flag, r.Err, r.Stderr, tt.says)
		}
	}
	strict := decode[adminapi.IssuedKey](t, mustOut(hdc(t, dir, "keys", "rotate", "--client", c, "--enc", "A128CBC-HS256", "--allow-weaker")))
	doubled := base64.RawURLEncoding.EncodeToString([]byte(strict.Secret + strict.Secret))
	if strict.Enc != "A128CBC-HS256" || !strict.RequireFresh || len(strict.Secret) != 16 ||
		strict.JWK != (clientkey.JWK{Kty: "oct", Kid: strict.Kid, Enc: "A128CBC-HS256", K: doubled}) {
		t.Fatalf("rotate --enc A128CBC-HS256 --allow-weaker (freshness kept) printed %+v", strict)
	}
	mustOut(hdc(t, dir, "keys", "retire", "--kid", gcm.Kid))
	plain := decode[adminapi.IssuedKey](t, mustOut(hdc(t, dir, "keys", "rotate", "--client", c, "--require-fresh=false", "--allow-weaker")))
	mustOut(hdc(t, dir, "keys", "retire", "--kid", strict.Kid))
	type kind struct {
		Enc   string
		Fresh bool
	}
	kinds := map[string]kind{}
	type listed struct {
		Kid, Enc     string
		RequireFresh *bool `json:"require_fresh"`
	}
	for _, k := range decode[[]listed](t, mustOut(hdc(t, dir, "keys", "list", "--json"))) {
		if k.RequireFresh == nil {
			t.Fatalf("list --json does not say whether %s requires freshness", k.Kid)
		}
		kinds[k.Kid] = kind{k.Enc, *k.RequireFresh}
	}
	if want := map[string]kind{first.Kid: {"A256GCM", true}, gcm.Kid: {"A256GCM", true}, strict.Kid: {"A128CBC-HS256", true}, plain.Kid: {"A128CBC-HS256", false}}; !maps.Equal(kinds, want) {
		t.Fatalf("list --json shows %v, want %v", kinds, want)
	}
	// The table says it too, in a column of its own.
	table := strings.Split(strings.TrimSpace(string(mustOut(hdc(t, dir, "keys", "list")))), "\n")
	if head := strings.Fields(table[0]); len(head) < 4 || head[3] != "FRESH" {
		t.Fatalf("list's header: %q", table[0])
	}
	for _, line := range table[1:] {
		f := strings.Fields(line)
		if want := map[bool]string{true: "yes", false: "no"}[kinds[f[0]].Fresh]; len(f) < 4 || f[3] != want {
			t.Fatalf("list's line %q, want FRESH %s", line, want)
		}
	}
	reg := filepath.Join(t.TempDir(), "keys.json")
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"an unknown enc", []string{"keys", "add", "--data", dir, "--client", c, "--enc", "A128GCM"}},
		{"an unknown enc in a registry file", []string{"keys", "add", "--registry", reg, "--client", c, "--enc", "A128GCM"}},
		{"an unknown enc in a rotation", []string{"keys", "rotate", "--data", dir, "--client", c, "--enc", "A128GCM"}},
		{"the retirement of the last active key", []string{"keys", "retire", "--data", dir, "--kid", plain.Kid}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if r := clitest.Run(t, nil, tt.args...); r.Err == nil {
				t.Fatalf("accepted: %s", r.Stdout)
			}
		})
	}
	if n := len(decode[[]clientkey.Listed](t, mustOut(hdc(t, dir, "keys", "list", "--json")))); n != 4 {
		t.Fatalf("%d keys after the refusals", n)
	}
	if _, err := os.Stat(reg); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the registry file was written: %v", err)
	}
}

// TestKeysAddHelpDescribesWhatItPrints: add's help names every member of
// what it prints and of the JWK, for a key of each kind, and no "alg",
// which the JWK does not name.
func TestKeysAddHelpDescribesWhatItPrints(t *testing.T) {
	t.Parallel()
	help := newKeysAddCmd(nil).Long
	if strings.Contains(help, `"alg"`) {
		t.Errorf("add's help names \"alg\":\n%s", help)
	}
	for _, k := range []clientkey.Key{
		{Kid: "k-gcm", ClientID: "c1", Secret: jwe.NewGCMSecret(), Enc: jwe.EncA256GCM},
		{Kid: "k-cbc", ClientID: "c1", Secret: "0123456789abcdef", RequireFresh: true},
	} {
		b, err := json.Marshal(adminapi.Issued(k))
		if err != nil {
			t.Fatal(err)
		}
		printed := decode[map[string]any](t, string(b))
		jwk, _ := printed["jwk"].(map[string]any)
		for _, name := range slices.Concat(slices.Collect(maps.Keys(printed)), slices.Collect(maps.Keys(jwk))) {
			if !strings.Contains(help, `"`+name+`"`) {
				t.Errorf("add's help does not name %q, which it prints for %s", name, k.Kid)
			}
		}
	}
}

// TestRegistryKeysOfEachKind: hdc keys add --registry makes a key of each
// kind, which list --registry shows as it was made, and which import
// moves into the database as it is, enc and require_fresh included.
func TestRegistryKeysOfEachKind(t *testing.T) {
	t.Parallel()
	dir, reg := t.TempDir(), filepath.Join(t.TempDir(), "keys.json")
	type kind struct {
		Enc          string
		RequireFresh bool `json:"require_fresh"`
	}
	want := map[string]kind{}
	for _, tt := range []struct {
		name  string
		flags []string
		want  kind
	}{
		{"the default", nil, kind{"A128CBC-HS256", false}},
		{"--require-fresh", []string{"--require-fresh"}, kind{"A128CBC-HS256", true}},
		{"A256GCM", []string{"--enc", "A256GCM"}, kind{"A256GCM", true}},
		{"A256GCM --require-fresh", []string{"--enc", "A256GCM", "--require-fresh"}, kind{"A256GCM", true}},
	} {
		r := clitest.Run(t, nil, append([]string{"keys", "add", "--registry", reg, "--client", "c-file"}, tt.flags...)...)
		if r.Err != nil {
			t.Fatalf("add %s: %v %s", tt.name, r.Err, r.Stderr)
		}
		k := decode[adminapi.IssuedKey](t, string(r.Stdout))
		if (kind{k.Enc, k.RequireFresh}) != tt.want || k.JWK.Enc != tt.want.Enc {
			t.Fatalf("add %s printed %+v, want %+v", tt.name, k, tt.want)
		}
		want[k.Kid] = tt.want
	}
	listed := func(store ...string) map[string]kind {
		r := clitest.Run(t, nil, append([]string{"keys", "list", "--json"}, store...)...)
		if r.Err != nil {
			t.Fatalf("list: %v %s", r.Err, r.Stderr)
		}
		got := map[string]kind{}
		for _, k := range decode[[]clientkey.Listed](t, string(r.Stdout)) {
			got[k.Kid] = kind{k.Enc, k.RequireFresh}
		}
		return got
	}
	if got := listed("--registry", reg); !maps.Equal(got, want) {
		t.Fatalf("list --registry shows %v, want %v", got, want)
	}
	if got := decode[map[string]int](t, mustOut(hdc(t, dir, "keys", "import", reg))); got["keys"] != len(want) {
		t.Fatalf("import printed %v", got)
	}
	if got := listed("--data", dir); !maps.Equal(got, want) {
		t.Fatalf("after import, list shows %v, want %v", got, want)
	}
}
