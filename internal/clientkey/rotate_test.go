package clientkey

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/jwe"
)

func TestRotate(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	key := func(kid string, s Status) Key { k := New("c1", kid, "", "", false, t0); k.Status = s; return k }
	tests := []struct {
		name        string
		keys        []Key
		wantChanged []string // kids moved to retiring
		wantErr     error
	}{
		{"one active", []Key{key("k1", Active)}, []string{"k1"}, nil},
		{"active and retiring", []Key{key("k1", Retiring), key("k2", Active)}, []string{"k2"}, nil},
		{"two active (an import)", []Key{key("k1", Active), key("k2", Active)}, []string{"k1", "k2"}, nil},
		{"only retired", []Key{key("k1", Retired)}, nil, nil},
		{"no keys", nil, nil, ErrNoKeys},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := New("c1", "k9", "", jwe.EncA256GCM, false, t0)
			r, err := Rotate(tt.keys, next, false, t1)
			changed, added := r.Changed, r.Added
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Rotate: %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			var kids []string
			for _, c := range changed {
				if c.Status != Retiring || !c.RetiringAt.Equal(t1) {
					t.Fatalf("changed %+v: want retiring at %v", c, t1)
				}
				kids = append(kids, c.Kid)
			}
			if !slices.Equal(kids, tt.wantChanged) {
				t.Fatalf("changed %v, want %v", kids, tt.wantChanged)
			}
			if added.Kid != "k9" || added.Status != Active || !added.CreatedAt.Equal(t1) || added.Enc != jwe.EncA256GCM {
				t.Fatalf("added %+v", added)
			}
			if tt.keys[0].Status == Active && tt.keys[0].RetiringAt.IsZero() == false {
				t.Fatal("Rotate changed the keys it was given")
			}
		})
	}
}

// TestRotationKeepsTheKind (fourth review, finding 11): a rotation's new
// key is of the kind of the key it replaces unless the operator names
// another, and one weaker than it (A256GCM for A128CBC-HS256, fresh for
// not) is refused unless allowed, saying what the client would lose.
func TestRotationKeepsTheKind(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	key := func(kid, enc string, fresh bool, s Status, at time.Duration) Key {
		k := New("c1", kid, "", enc, fresh, t0.Add(at))
		k.Status = s
		return k
	}
	gcm := key("k-gcm", jwe.EncA256GCM, false, Active, 0)
	cbcFresh := key("k-cbc-fresh", jwe.EncA128CBCHS256, true, Active, 0)
	cbc := key("k-cbc", jwe.EncA128CBCHS256, false, Active, 0)
	yes, no := true, false
	tests := []struct {
		name   string
		keys   []Key
		enc    string
		fresh  *bool
		want   Kind
		lost   []string
		weaken bool // the rotation is allowed only with it
	}{
		{"A256GCM kept", []Key{gcm}, "", nil, Kind{jwe.EncA256GCM, true}, nil, false},
		{"fresh A128CBC-HS256 kept", []Key{cbcFresh}, "", nil, Kind{jwe.EncA128CBCHS256, true}, nil, false},
		{"A128CBC-HS256 kept", []Key{cbc}, "", nil, Kind{jwe.EncA128CBCHS256, false}, nil, false},
		{"the newest active key's", []Key{gcm, key("k-new", jwe.EncA128CBCHS256, false, Active, time.Hour), key("k-old", "", false, Retiring, 2*time.Hour)},
			"", nil, Kind{jwe.EncA128CBCHS256, false}, nil, false},
		{"the newest key's when none is active", []Key{key("k-a", "", false, Retiring, 0), key("k-b", jwe.EncA256GCM, false, Retired, time.Hour)},
			"", nil, Kind{jwe.EncA256GCM, true}, nil, false},
		{"to A256GCM is stronger", []Key{cbc}, jwe.EncA256GCM, nil, Kind{jwe.EncA256GCM, true}, nil, false},
		{"to fresh is stronger", []Key{cbc}, "", &yes, Kind{jwe.EncA128CBCHS256, true}, nil, false},
		{"A256GCM to A128CBC-HS256 keeps freshness", []Key{gcm}, jwe.EncA128CBCHS256, nil, Kind{jwe.EncA128CBCHS256, true}, []string{LostEnc}, true},
		{"A256GCM to A128CBC-HS256 without freshness", []Key{gcm}, jwe.EncA128CBCHS256, &no, Kind{jwe.EncA128CBCHS256, false}, []string{LostEnc, LostFreshness}, true},
		{"fresh to not", []Key{cbcFresh}, "", &no, Kind{jwe.EncA128CBCHS256, false}, []string{LostFreshness}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, err := NextKind(tt.keys, tt.enc, tt.fresh)
			if err != nil || kind != tt.want {
				t.Fatalf("NextKind = %+v, want %+v", kind, tt.want)
			}
			next := New("c1", "k-next", "", kind.Enc, kind.Fresh, t0)
			r, err := Rotate(tt.keys, next, false, t0.Add(3*time.Hour))
			var weaker *WeakerError
			switch {
			case tt.weaken && (!errors.As(err, &weaker) || !slices.Equal(weaker.Lost, tt.lost) || weaker.To != kind):
				t.Fatalf("Rotate without leave: %v, want a *WeakerError losing %v", err, tt.lost)
			case !tt.weaken && (err != nil || r.Added.Kind() != kind || r.Lost != nil):
				t.Fatalf("Rotate: %+v, %v; want a key of %+v losing nothing", r, err, kind)
			}
			if r, err = Rotate(tt.keys, next, true, t0.Add(3*time.Hour)); err != nil || !slices.Equal(r.Lost, tt.lost) || r.Added.Kind() != kind {
				t.Fatalf("Rotate with leave: %+v, %v; want a key of %+v losing %v", r, err, kind, tt.lost)
			}
		})
	}
	for _, enc := range []string{"", jwe.EncA256GCM} {
		if _, err := NextKind([]Key{cbc}, enc, &no); enc != "" && !errors.Is(err, ErrStaleGCM) || enc == "" && err != nil {
			t.Fatalf("NextKind(enc %q, not fresh) of an A128CBC-HS256 key: %v", enc, err)
		}
		if _, err := NextKind([]Key{gcm}, enc, &no); !errors.Is(err, ErrStaleGCM) {
			t.Fatalf("NextKind(enc %q, not fresh) of an A256GCM key: %v, want ErrStaleGCM", enc, err)
		}
	}
	if msg := (&WeakerError{Replaced: "k-gcm", From: gcm.Kind(), To: Kind{jwe.EncA128CBCHS256, false}, Lost: []string{LostEnc, LostFreshness}}).Error(); !strings.Contains(msg, "A128CBC-HS256, not A256GCM") || !strings.Contains(msg, "no longer be checked for replays") {
		t.Fatalf("the refusal does not say what the client loses: %s", msg)
	}
}

// TestCheckRetire: the retirement of a client's last active key is refused
// (it would lock the client out), of any other key allowed.
func TestCheckRetire(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	key := func(kid string, s Status) Key { k := New("c1", kid, "", "", false, t0); k.Status = s; return k }
	tests := []struct {
		name     string
		keys     []Key
		kid      string
		retiring int // -1: allowed
	}{
		{"the only key", []Key{key("k1", Active)}, "k1", 0},
		{"the only active key, a retiring one beside", []Key{key("k1", Active), key("k0", Retiring), key("kx", Retired)}, "k1", 1},
		{"one of two active keys", []Key{key("k1", Active), key("k2", Active)}, "k1", -1},
		{"a retiring key", []Key{key("k1", Active), key("k0", Retiring)}, "k0", -1},
		{"the last retiring key, none active", []Key{key("k0", Retiring), key("kx", Retired)}, "k0", 0},
		{"a retiring key of two, none active", []Key{key("k0", Retiring), key("k1", Retiring)}, "k0", -1},
		{"a retired key", []Key{key("k1", Active), key("k0", Retired)}, "k0", -1},
		{"no such key", []Key{key("k1", Active)}, "k9", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckRetire(tt.keys, tt.kid)
			var lock *LockOutError
			switch {
			case tt.retiring < 0 && err != nil:
				t.Fatalf("CheckRetire: %v, want nil", err)
			case tt.retiring >= 0 && (!errors.As(err, &lock) || lock.Retiring != tt.retiring || lock.Kid != tt.kid || lock.Client != "c1" || !strings.Contains(err.Error(), "refused")):
				t.Fatalf("CheckRetire: %v, want a *LockOutError with %d retiring", err, tt.retiring)
			}
		})
	}
}

func TestRetire(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	k := New("c1", "k1", "", "", false, t0)
	retired, changed := Retire(k, t0.Add(time.Minute))
	if !changed || retired.Status != Retired || !retired.RetiredAt.Equal(t0.Add(time.Minute)) || k.Status != Active {
		t.Fatalf("Retire: %+v, %v (the given key: %+v)", retired, changed, k)
	}
	again, changed := Retire(retired, t0.Add(time.Hour))
	if changed || again != retired {
		t.Fatalf("Retire of a retired key: %+v, %v", again, changed)
	}
}

func TestNew(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.FixedZone("x", 3600))
	for _, enc := range []string{"", jwe.EncA128CBCHS256, jwe.EncA256GCM} {
		k := New("c1", "", "", enc, false, t0)
		if err := k.Validate(); err != nil || !ValidKid(k.Kid) || k.Status != Active || k.CreatedAt.Location() != time.UTC {
			t.Fatalf("New(%q) = %+v: %v", enc, k, err)
		}
	}
	if a, b := New("c1", "", "", "", false, t0), New("c1", "", "", "", false, t0); a.Kid == b.Kid || a.Secret == b.Secret {
		t.Fatal("two new keys share a kid or a secret")
	}
}
