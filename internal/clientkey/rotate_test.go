package clientkey

import (
	"errors"
	"slices"
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
			changed, added, err := Rotate(tt.keys, next, t1)
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
