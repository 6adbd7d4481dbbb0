package registryfile

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/clientkey"
)

const validFile = `{"keys":[
 {"kid":"k1","client_id":"c1","secret":"0123456789abcdef","status":"retiring","created_at":"2026-01-01T00:00:00Z","retiring_at":"2026-02-01T00:00:00Z"},
 {"kid":"k2","client_id":"c1","secret":"fedcba9876543210","status":"active","created_at":"2026-02-01T00:00:00Z"},
 {"kid":"k3","client_id":"c1","secret":"aaaaaaaaaaaaaaaa","status":"active","created_at":"2026-01-15T00:00:00Z"},
 {"kid":"k4","client_id":"c2","secret":"éééééééé","status":"retired","created_at":"2026-01-01T00:00:00Z"}
]}`

// gcmSecret is an A256GCM key's secret: its 32 bytes (0 to 31) in unpadded
// base64url, the JWK's k.
const gcmSecret = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"

// kindsFile holds a key of each kind, in the clear: one of an earlier
// version's file (no enc), an A128CBC-HS256 key that requires freshness,
// and A256GCM keys with and without require_fresh.
const kindsFile = `{"keys":[
 {"kid":"k-old","client_id":"c1","secret":"0123456789abcdef","status":"active","created_at":"2026-01-01T00:00:00Z"},
 {"kid":"k-strict","client_id":"c1","enc":"A128CBC-HS256","require_fresh":true,"secret":"fedcba9876543210","status":"active","created_at":"2026-01-01T00:00:00Z"},
 {"kid":"k-gcm","client_id":"c2","enc":"A256GCM","require_fresh":true,"secret":"` + gcmSecret + `","status":"active","created_at":"2026-01-01T00:00:00Z"},
 {"kid":"k-gcm-implied","client_id":"c2","enc":"A256GCM","secret":"` + gcmSecret + `","status":"retiring","created_at":"2026-01-01T00:00:00Z","retiring_at":"2026-02-01T00:00:00Z"}
]}`

// kind is what a key is besides its secret: its enc, and whether its
// envelopes must name iat and jti.
type kind struct {
	enc   string
	fresh bool
}

func kindOf(k *Entry) kind { return kind{k.ContentEncryption(), k.NeedsFreshness()} }

// kindsOf are kindsFile's keys as the file says they are.
var kindsOf = map[string]kind{
	"k-old":         {"A128CBC-HS256", false},
	"k-strict":      {"A128CBC-HS256", true},
	"k-gcm":         {"A256GCM", true},
	"k-gcm-implied": {"A256GCM", true}, // an A256GCM key needs freshness, whatever require_fresh says
}

// TestParseKeepsKinds: a key is of the enc the file names, A128CBC-HS256
// when it names none (a file of an earlier version), and requires iat and
// jti when the file says so.
func TestParseKeepsKinds(t *testing.T) {
	t.Parallel()
	r, err := Parse([]byte(kindsFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		kid     string
		want    kind
		require bool // RequireFresh, as the file has it
	}{
		{"k-old", kindsOf["k-old"], false},
		{"k-strict", kindsOf["k-strict"], true},
		{"k-gcm", kindsOf["k-gcm"], true},
		{"k-gcm-implied", kindsOf["k-gcm-implied"], false},
	} {
		t.Run(tt.kid, func(t *testing.T) {
			t.Parallel()
			k, ok := r.Lookup(tt.kid)
			if !ok || !k.Usable() {
				t.Fatalf("Lookup(%q) = %+v, %v", tt.kid, k, ok)
			}
			if got := kindOf(k); got != tt.want || k.RequireFresh != tt.require {
				t.Fatalf("%s is %+v (require_fresh %v), want %+v (%v)", tt.kid, got, k.RequireFresh, tt.want, tt.require)
			}
		})
	}
}

func TestParseValid(t *testing.T) {
	r, err := Parse([]byte(validFile), nil) // k4's secret is 8 two-byte runes: 16 bytes

	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		kid        string
		wantClient string
		wantUsable bool
		found      bool
	}{
		{"retiring key is usable", "k1", "c1", true, true},
		{"active key is usable", "k2", "c1", true, true},
		{"retired key is not usable", "k4", "c2", false, true},
		{"unknown kid", "nope", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, ok := r.Lookup(tt.kid)
			if ok != tt.found {
				t.Fatalf("Lookup(%q) found = %v", tt.kid, ok)
			}
			if ok && (k.ClientID != tt.wantClient || k.Usable() != tt.wantUsable) {
				t.Fatalf("Lookup(%q) = %+v", tt.kid, k)
			}
		})
	}
	if k, ok := r.ActiveKey("c1"); !ok || k.Kid != "k2" {
		t.Fatalf("ActiveKey(c1) = %v, %v; want the newest active key k2", k, ok)
	}
	if _, ok := r.ActiveKey("c2"); ok {
		t.Fatal("ActiveKey(c2) found a key, but c2's only key is retired")
	}
}

func TestParseInvalid(t *testing.T) {
	key := func(fields string) string { return `{"keys":[` + fields + `]}` }
	ok := `"kid":"k1","client_id":"c1","secret":"0123456789abcdef","status":"active","created_at":"2026-01-01T00:00:00Z"`
	tests := []struct {
		name, data, wantErr string
	}{
		{"not JSON", `{"keys":`, "not valid JSON"},
		{"trailing data", key("{"+ok+"}") + "{}", "after the JSON object"},
		{"a case variant of a member", key(`{` + strings.Replace(ok, `"active"`, `"retired","Status":"active"`, 1) + `}`), "key 0: unknown member"},
		{"a member twice", key(`{` + ok + `,"status":"retired"}`), `key 0: member "status" appears twice`},
		{"a secret twice, in another case", key(`{` + ok + `,"SECRET":"fedcba9876543210"}`), "key 0: unknown member"},
		{"keys twice", `{"keys":[],"keys":[{` + ok + `}]}`, `member "keys" appears twice`},
		{"no keys member", `{}`, `no "keys" member`},
		{"null keys", `{"keys":null}`, `no "keys" member`},
		{"Keys", `{"Keys":[]}`, "unknown member"},
		{"unknown field", key(`{` + ok + `,"stauts":"active"}`), "not valid JSON"},
		{"duplicate kid", key(`{` + ok + `},{` + ok + `}`), "duplicate kid"},
		{"empty kid", key(`{` + strings.Replace(ok, `"k1"`, `""`, 1) + `}`), "kid must be"},
		{"kid with space", key(`{` + strings.Replace(ok, `"k1"`, `"k 1"`, 1) + `}`), "kid must be"},
		{"kid with newline", key(`{` + strings.Replace(ok, `"k1"`, `"k\n1"`, 1) + `}`), "kid must be"},
		{"short secret", key(`{` + strings.Replace(ok, "0123456789abcdef", "0123456789abcde", 1) + `}`), "exactly 16 bytes"},
		{"long secret", key(`{` + strings.Replace(ok, "0123456789abcdef", "0123456789abcdefg", 1) + `}`), "exactly 16 bytes"},
		{"16 runes, 17 bytes", key(`{` + strings.Replace(ok, "0123456789abcdef", "é123456789abcdef", 1) + `}`), "exactly 16 bytes"},
		{"invalid UTF-8 byte", key(`{` + strings.Replace(ok, "0123456789abcdef", "\xff123456789abcde", 1) + `}`), "exactly 16 bytes"},
		{"unknown status", key(`{` + strings.Replace(ok, `"active"`, `"paused"`, 1) + `}`), "status must be"},
		{"no client", key(`{` + strings.Replace(ok, `"c1"`, `""`, 1) + `}`), "client_id"},
		{"no created_at", key(`{` + strings.Replace(ok, `,"created_at":"2026-01-01T00:00:00Z"`, "", 1) + `}`), "created_at"},
		{"secret is a number", key(`{` + strings.Replace(ok, `"0123456789abcdef"`, `12`, 1) + `}`), "wrong type"},
		{"an enc the transport does not know", key(`{` + ok + `},{` + strings.Replace(ok, `"k1"`, `"k2"`, 1) + `,"enc":"A128GCM"}`), `key 1 ("k2"): enc must be A128CBC-HS256 or A256GCM`},
		{"an enc in another case", key(`{` + ok + `,"enc":"a256gcm"}`), `key 0 ("k1"): enc must be`},
		{"an A256GCM key of a 16-byte secret", key(`{` + ok + `,"enc":"A256GCM"}`), `key 0 ("k1"): an A256GCM secret must be 32 bytes`},
		{"an A128CBC-HS256 key of an A256GCM secret", key(`{` + strings.Replace(ok, "0123456789abcdef", gcmSecret, 1) + `}`), "exactly 16 bytes"},
		{"an A256GCM key without a secret", key(`{` + strings.Replace(ok, `"secret":"0123456789abcdef",`, `"enc":"A256GCM",`, 1) + `}`), `key 0 ("k1"): secret or sealed_secret is required`},
		{"require_fresh is a string", key(`{` + ok + `,"require_fresh":"yes"}`), "wrong type"},
		{"an unknown member names its entry", key(`{` + ok + `},{` + strings.Replace(ok, `"k1"`, `"k2"`, 1) + `,"fresh":true}`), "key 1: unknown member"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.data), nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "0123456789abcde") {
				t.Fatalf("error reveals a secret: %v", err)
			}
		})
	}
}

func TestEdits(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var f File
	k1, err := f.Add("c1", "", "", "", false, now)
	if err != nil {
		t.Fatal(err)
	}
	if !clientkey.ValidKid(k1.Kid) || len(k1.Secret) != clientkey.SecretSize || k1.Status != clientkey.Active {
		t.Fatalf("generated key %+v", k1)
	}
	if _, err := f.Add("c2", k1.Kid, "", "", false, now); err == nil {
		t.Fatal("Add accepted a duplicate kid")
	}
	if _, _, err := f.Rotate("nobody", "", nil, false, now); err == nil {
		t.Fatal("Rotate accepted a client without keys")
	}
	var lock *clientkey.LockOutError
	if err := f.Retire(k1.Kid, false, now); !errors.As(err, &lock) {
		t.Fatalf("the retirement of c1's only key: %v, want a *clientkey.LockOutError", err)
	}
	k2, rotated, err := f.Rotate("c1", "", nil, false, now.Add(time.Hour))
	if err != nil || len(rotated.Changed) != 1 || rotated.Changed[0].Kid != k1.Kid {
		t.Fatalf("Rotate: %+v, %v", rotated, err)
	}
	r, err := New(f)
	if err != nil {
		t.Fatal(err)
	}
	if old, _ := r.Lookup(k1.Kid); old.Status != clientkey.Retiring || old.RetiringAt.IsZero() {
		t.Fatalf("after rotate the old key is %+v", old)
	}
	if cur, _ := r.ActiveKey("c1"); cur.Kid != k2.Kid {
		t.Fatalf("active key %s, want %s", cur.Kid, k2.Kid)
	}
	if err := f.Retire(k1.Kid, false, now); err != nil {
		t.Fatal(err)
	}
	if err := f.Retire("missing", false, now); err == nil {
		t.Fatal("Retire accepted an unknown kid")
	}
	r, _ = New(f)
	if old, _ := r.Lookup(k1.Kid); old.Usable() || old.RetiredAt.IsZero() {
		t.Fatalf("retired key %+v is still usable", old)
	}
}
