package admin

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/jwe"
)

// clientOf creates a client of workspace ws through the API and returns
// its id.
func (a *api) clientOf(ws string) string {
	a.t.Helper()
	var c adminapi.Credentials
	a.do("operator", "POST", "/admin/v1/clients", map[string]string{"workspace_id": ws}).decode(a.t, 201, &c)
	return c.ClientID
}

// addKey adds a key to client through the API with body.
func (a *api) addKey(client string, body adminapi.AddKeyRequest) adminapi.IssuedKey {
	a.t.Helper()
	var k adminapi.IssuedKey
	a.do("operator", "POST", "/admin/v1/clients/"+client+"/keys", body).decode(a.t, 201, &k)
	return k
}

// kidsOf returns the kids of a page.
func kidsOf(p adminapi.Page[adminapi.KeyInfo]) []string {
	var kids []string
	for _, k := range p.Items {
		kids = append(kids, k.Kid)
	}
	return kids
}

// seedKeys adds k1 (A256GCM) to a client of w1, k2 and k3 to a client of
// w2, through the API, and an edge's use of k2 at used; it returns the
// clients and the keys' secrets.
func (a *api) seedKeys(used time.Time) (c1, c2 string, secrets []string) {
	a.t.Helper()
	c1, c2 = a.clientOf("w1"), a.clientOf("w2")
	k1 := a.addKey(c1, adminapi.AddKeyRequest{Kid: "k1", Enc: jwe.EncA256GCM})
	if k1.Secret == "" || k1.JWK.K != k1.Secret || k1.Enc != jwe.EncA256GCM || !k1.RequireFresh || k1.ClientID != c1 {
		a.t.Fatalf("added %+v", k1)
	}
	secrets = []string{k1.Secret}
	for _, kid := range []string{"k2", "k3"} {
		secrets = append(secrets, a.addKey(c2, adminapi.AddKeyRequest{Kid: kid}).Secret)
	}
	if err := a.st.ReportEdge(a.t.Context(), store.FleetEdge{ID: "e1", LastContact: used}, []store.KeyUse{{Kid: "k2", At: used}}); err != nil {
		a.t.Fatal(err)
	}
	return c1, c2, secrets
}

// TestKeys: an operator adds keys, whose records name her; both persons
// list them a page at a time by client, workspace and status, never with
// their secrets.
func TestKeys(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	_, c2, secrets := a.seedKeys(time.Now())
	rs, err := a.st.ListAudit(t.Context(), store.AuditFilter{Workspace: "w1", Agent: alice, Entity: "k1"})
	if err != nil || len(rs) != 1 || rs[0].Action != audit.KeyAdd || rs[0].Person.Serial == "" {
		t.Fatalf("k1's record by alice: %+v, %v", rs, err)
	}
	tests := []struct {
		name, query string
		want        []string
		next        bool
	}{
		{"every key", "", []string{"k1", "k2", "k3"}, false},
		{"a page", "?limit=2", []string{"k1", "k2"}, true},
		{"the next page", "?limit=2&cursor=" + encodeCursor("k2"), []string{"k3"}, false},
		{"a client's", "?client=" + c2, []string{"k2", "k3"}, false},
		{"a workspace's", "?workspace=w1", []string{"k1"}, false},
		{"a status", "?status=retiring", nil, false},
		{"a workspace's active keys", "?workspace=w2&status=active&limit=1", []string{"k2"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := a.do("auditor", "GET", "/admin/v1/keys"+tt.query, nil)
			var p adminapi.Page[adminapi.KeyInfo]
			r.decode(t, 200, &p)
			if !slices.Equal(kidsOf(p), tt.want) || (p.Next != "") != tt.next {
				t.Fatalf("got %v (next %q), want %v", kidsOf(p), p.Next, tt.want)
			}
			for _, s := range secrets {
				if strings.Contains(string(r.body), s) {
					t.Fatalf("a list shows a secret: %s", r.body)
				}
			}
		})
	}
	var rest adminapi.Page[adminapi.KeyInfo]
	a.do("auditor", "GET", "/admin/v1/keys?limit=2&cursor="+firstPage(t, a).Next, nil).decode(t, 200, &rest)
	if !slices.Equal(kidsOf(rest), []string{"k3"}) || rest.Next != "" {
		t.Fatalf("the second page, by the first's cursor: %+v", rest)
	}
}

// TestKeyLastUse: a key shows its last use at the edges once an edge
// reports one, and none before; never its secret.
func TestKeyLastUse(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	used := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	_, c2, secrets := a.seedKeys(used)
	var k2 adminapi.KeyInfo
	r := a.do("auditor", "GET", "/admin/v1/keys/k2", nil)
	r.decode(t, 200, &k2)
	if k2.ClientID != c2 || k2.WorkspaceID != "w2" || k2.Status != clientkey.Active || k2.LastUsedAt == nil || !k2.LastUsedAt.Equal(used) ||
		strings.Contains(string(r.body), secrets[1]) || strings.Contains(string(r.body), `"secret"`) {
		t.Fatalf("k2: %s", r.body)
	}
	var p adminapi.Page[adminapi.KeyInfo]
	a.do("auditor", "GET", "/admin/v1/keys?client="+c2, nil).decode(t, 200, &p)
	if len(p.Items) != 2 || p.Items[0].LastUsedAt == nil || p.Items[1].LastUsedAt != nil {
		t.Fatalf("c2's keys: %+v; want k2's last use and none of k3", p.Items)
	}
}

// firstPage returns the first page of two keys.
func firstPage(t *testing.T, a *api) adminapi.Page[adminapi.KeyInfo] {
	var p adminapi.Page[adminapi.KeyInfo]
	a.do("auditor", "GET", "/admin/v1/keys?limit=2", nil).decode(t, 200, &p)
	return p
}

// TestKeyRotationAndRetirement: a rotation's answer shows the new key
// once and the keys it moved to retiring, a dry run changes nothing, and
// a retirement retires, twice harmlessly.
func TestKeyRotationAndRetirement(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	c := a.clientOf("w1")
	old := a.addKey(c, adminapi.AddKeyRequest{Kid: "k-old", Enc: jwe.EncA256GCM})
	var dry adminapi.Rotation
	a.do("operator", "POST", "/admin/v1/clients/"+c+"/keys/rotate", adminapi.RotateKeyRequest{DryRun: true}).decode(t, 200, &dry)
	if !dry.DryRun || dry.Key != nil || dry.NewKey != (adminapi.KeyKind{Enc: jwe.EncA256GCM, RequireFresh: true}) || !slices.Equal(dry.Retiring, []string{old.Kid}) {
		t.Fatalf("a dry rotation: %+v", dry)
	}
	var rot adminapi.Rotation
	a.do("operator", "POST", "/admin/v1/clients/"+c+"/keys/rotate", adminapi.RotateKeyRequest{}).decode(t, 201, &rot)
	if rot.DryRun || rot.Key == nil || rot.Key.Secret == "" || rot.Key.Enc != jwe.EncA256GCM || !slices.Equal(rot.Retiring, []string{old.Kid}) || rot.ClientID != c {
		t.Fatalf("a rotation: %+v", rot)
	}
	var p adminapi.Page[adminapi.KeyInfo]
	a.do("auditor", "GET", "/admin/v1/keys?status=retiring", nil).decode(t, 200, &p)
	if !slices.Equal(kidsOf(p), []string{old.Kid}) || p.Items[0].RetiringAt == nil {
		t.Fatalf("the retiring keys: %+v", p)
	}
	var ret adminapi.Retirement
	a.do("operator", "POST", "/admin/v1/keys/"+old.Kid+"/retire", adminapi.RetireKeyRequest{}).decode(t, 200, &ret)
	if !ret.Changed || ret.Key.Status != clientkey.Retired || ret.Key.RetiredAt == nil {
		t.Fatalf("the retirement: %+v", ret)
	}
	var again adminapi.Retirement
	a.do("operator", "POST", "/admin/v1/keys/"+old.Kid+"/retire", adminapi.RetireKeyRequest{}).decode(t, 200, &again)
	if again.Changed || !again.Key.RetiredAt.Equal(*ret.Key.RetiredAt) {
		t.Fatalf("the retirement again: %+v, want unchanged", again)
	}
	var forced adminapi.Retirement
	a.do("operator", "POST", "/admin/v1/keys/"+rot.Key.Kid+"/retire", adminapi.RetireKeyRequest{Force: true, DryRun: true}).decode(t, 200, &forced)
	if !forced.DryRun || !forced.Changed || forced.Key.Status != clientkey.Retired {
		t.Fatalf("a dry forced retirement: %+v", forced)
	}
	var k adminapi.KeyInfo
	a.do("auditor", "GET", "/admin/v1/keys/"+rot.Key.Kid, nil).decode(t, 200, &k)
	if k.Status != clientkey.Active {
		t.Fatalf("after a dry retirement: %+v", k)
	}
}

// TestKeyRefusals: each refusal of the key administration is a problem
// with a stable code, and changes nothing.
func TestKeyRefusals(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	gcm, empty := a.clientOf("w1"), a.clientOf("w1")
	only := a.addKey(gcm, adminapi.AddKeyRequest{Kid: "k-only", Enc: jwe.EncA256GCM})
	unknown := "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01"
	stale := false
	tests := []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"a weaker key", "POST", "/admin/v1/clients/" + gcm + "/keys/rotate", adminapi.RotateKeyRequest{Enc: jwe.EncA128CBCHS256}, 409, "weaker_key"},
		{"a stale A256GCM key", "POST", "/admin/v1/clients/" + gcm + "/keys/rotate", adminapi.RotateKeyRequest{RequireFresh: &stale}, 400, "invalid_request"},
		{"an unknown enc", "POST", "/admin/v1/clients/" + gcm + "/keys/rotate", adminapi.RotateKeyRequest{Enc: "A128GCM"}, 400, "invalid_request"},
		{"the last active key", "POST", "/admin/v1/keys/k-only/retire", adminapi.RetireKeyRequest{}, 409, "last_active_key"},
		{"no key to rotate", "POST", "/admin/v1/clients/" + empty + "/keys/rotate", adminapi.RotateKeyRequest{}, 409, "no_key_to_rotate"},
		{"rotating no client", "POST", "/admin/v1/clients/" + unknown + "/keys/rotate", adminapi.RotateKeyRequest{}, 404, "not_found"},
		{"adding to no client", "POST", "/admin/v1/clients/" + unknown + "/keys", adminapi.AddKeyRequest{}, 404, "not_found"},
		{"a kid taken", "POST", "/admin/v1/clients/" + empty + "/keys", adminapi.AddKeyRequest{Kid: "k-only"}, 409, "conflict"},
		{"a bad kid", "POST", "/admin/v1/clients/" + empty + "/keys", adminapi.AddKeyRequest{Kid: "k 1"}, 400, "invalid_request"},
		{"a short secret", "POST", "/admin/v1/clients/" + empty + "/keys", adminapi.AddKeyRequest{Secret: "short"}, 400, "invalid_request"},
		{"an unknown member", "POST", "/admin/v1/clients/" + empty + "/keys", map[string]string{"kind": "x"}, 400, "invalid_request"},
		{"retiring no key", "POST", "/admin/v1/keys/k-none/retire", adminapi.RetireKeyRequest{}, 404, "not_found"},
		{"reading no key", "GET", "/admin/v1/keys/k-none", nil, 404, "not_found"},
		{"a kid of the wrong syntax", "GET", "/admin/v1/keys/k%20x", nil, 404, "not_found"},
		{"an unknown status", "GET", "/admin/v1/keys?status=gone", nil, 400, "invalid_request"},
		{"a workspace of the wrong syntax", "GET", "/admin/v1/keys?workspace=a/b", nil, 400, "invalid_request"},
		{"a cursor not given", "GET", "/admin/v1/keys?cursor=AAAA", nil, 400, "invalid_request"},
		{"an auditor's rotation", "POST", "/admin/v1/clients/" + gcm + "/keys/rotate", adminapi.RotateKeyRequest{}, 403, "forbidden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			who := "operator"
			if strings.HasPrefix(tt.name, "an auditor") {
				who = "auditor"
			}
			r := a.do(who, tt.method, tt.path, tt.body)
			if r.status != tt.status || r.problemCode() != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.status, r.body, tt.status, tt.code)
			}
			if strings.Contains(string(r.body), "short") && tt.code == "invalid_request" && tt.method == "POST" {
				t.Fatalf("the refusal quotes the secret: %s", r.body)
			}
		})
	}
	keys, err := a.st.ListClientKeys(t.Context(), store.ClientKeyFilter{Limit: 10})
	if err != nil || len(keys) != 1 || keys[0].Kid != only.Kid || keys[0].Status != clientkey.Active {
		t.Fatalf("the refusals changed the keys: %+v, %v", keys, err)
	}
}

// TestKeyAddReplayed: an addition sent again under its Idempotency-Key is
// answered with the same key, secret included, and makes one key.
func TestKeyAddReplayed(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	c := a.clientOf("w1")
	var first, again adminapi.IssuedKey
	a.do("operator", "POST", "/admin/v1/clients/"+c+"/keys", adminapi.AddKeyRequest{}, web.HeaderIdempotencyKey, "add-1").decode(t, 201, &first)
	r := a.do("operator", "POST", "/admin/v1/clients/"+c+"/keys", adminapi.AddKeyRequest{}, web.HeaderIdempotencyKey, "add-1")
	r.decode(t, 201, &again)
	if again != first || first.Secret == "" || r.header.Get(web.HeaderReplayed) != "true" {
		t.Fatalf("the replay answered %+v (replayed %q), the first %+v", again, r.header.Get(web.HeaderReplayed), first)
	}
	keys, err := a.st.ListClientKeys(t.Context(), store.ClientKeyFilter{ClientID: c, Limit: 10})
	if err != nil || len(keys) != 1 || keys[0].Kid != first.Kid {
		t.Fatalf("the client's keys: %+v, %v; want the one", keys, err)
	}
	var rot1, rot2 adminapi.Rotation
	a.do("operator", "POST", "/admin/v1/clients/"+c+"/keys/rotate", adminapi.RotateKeyRequest{}, web.HeaderIdempotencyKey, "rot-1").decode(t, 201, &rot1)
	a.do("operator", "POST", "/admin/v1/clients/"+c+"/keys/rotate", adminapi.RotateKeyRequest{}, web.HeaderIdempotencyKey, "rot-1").decode(t, 201, &rot2)
	if rot1.Key == nil || rot2.Key == nil || *rot1.Key != *rot2.Key {
		t.Fatalf("the rotation replayed: %+v, %+v", rot1, rot2)
	}
	if keys, err := a.st.ListClientKeys(t.Context(), store.ClientKeyFilter{ClientID: c, Limit: 10}); err != nil || len(keys) != 2 {
		t.Fatalf("after a rotation sent twice: %+v, %v; want two keys", keys, err)
	}
}
