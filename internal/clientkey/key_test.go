package clientkey

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/jwe"
)

func TestValidKid(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"k_2x7", true},
		{"client-1:2026.11", true},
		{strings.Repeat("k", 128), true},
		{"", false},
		{strings.Repeat("k", 129), false},
		{"k 1", false},
		{"k/1", false},
		{"k\n1", false},
		{`k"1`, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := ValidKid(tt.in); got != tt.want {
				t.Errorf("ValidKid(%q) = %v", tt.in, got)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	good := New("c1", "k1", "", "", false, now)
	tests := []struct {
		name string
		edit func(*Key)
		want string // "" for valid
	}{
		{"A128CBC-HS256", func(*Key) {}, ""},
		{"A256GCM", func(k *Key) { k.Enc, k.Secret = jwe.EncA256GCM, jwe.NewGCMSecret() }, ""},
		{"no secret: listed, or sealed", func(k *Key) { k.Secret = "" }, ""},
		{"bad kid", func(k *Key) { k.Kid = "k 1" }, "kid must be"},
		{"no client", func(k *Key) { k.ClientID = "" }, "client_id must be"},
		{"bad enc", func(k *Key) { k.Enc = "A128GCM" }, "enc must be"},
		{"short secret", func(k *Key) { k.Secret = "short" }, "exactly 16 bytes"},
		{"a 16-byte secret for A256GCM", func(k *Key) { k.Enc = jwe.EncA256GCM }, "A256GCM secret must be"},
		{"bad status", func(k *Key) { k.Status = "gone" }, "status must be"},
		{"no date", func(k *Key) { k.CreatedAt = time.Time{} }, "created_at is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := good
			tt.edit(&k)
			err := k.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate: %v, want %q", err, tt.want)
			case err != nil && k.Secret != "" && strings.Contains(err.Error(), k.Secret):
				t.Fatalf("the error names the secret: %v", err)
			}
		})
	}
}

func TestKind(t *testing.T) {
	tests := []struct {
		enc          string
		requireFresh bool
		wantEnc      string
		wantFresh    bool
	}{
		{"", false, jwe.EncA128CBCHS256, false},
		{jwe.EncA128CBCHS256, true, jwe.EncA128CBCHS256, true},
		{jwe.EncA256GCM, false, jwe.EncA256GCM, true},
	}
	for _, tt := range tests {
		t.Run(tt.wantEnc, func(t *testing.T) {
			k := Key{Enc: tt.enc, RequireFresh: tt.requireFresh}
			if k.ContentEncryption() != tt.wantEnc || k.NeedsFreshness() != tt.wantFresh {
				t.Fatalf("%+v: enc %s, fresh %v", k, k.ContentEncryption(), k.NeedsFreshness())
			}
		})
	}
}

// TestListedKey: a key's listed form, given its secret, is the key again,
// every field of it: a field that Listed leaves out or Key forgets fails
// here, before a registry file, which stores keys in their listed form,
// loses it.
func TestListedKey(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		key  Key
	}{
		{"every field", Key{Kid: "k1", ClientID: "c1", Secret: jwe.NewGCMSecret(), Enc: jwe.EncA256GCM, RequireFresh: true,
			Status: Retired, CreatedAt: now, RetiringAt: now.Add(time.Hour), RetiredAt: now.Add(2 * time.Hour)}},
		{"A128CBC-HS256 --require-fresh", New("c1", "k2", "", jwe.EncA128CBCHS256, true, now)},
		{"A128CBC-HS256", New("c1", "k3", "", "", false, now)},
	}
	full := reflect.ValueOf(tests[0].key)
	for i := range full.NumField() {
		if full.Field(i).IsZero() {
			t.Fatalf("%s is not set: its loss would go unseen", full.Type().Field(i).Name)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			listed := tt.key.Listed()
			if got := listed.Key(tt.key.Secret); got != tt.key {
				t.Fatalf("listed and back, %+v is %+v", tt.key, got)
			}
		})
	}
}
