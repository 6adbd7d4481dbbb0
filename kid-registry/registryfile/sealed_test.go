package registryfile

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// sealedFile writes validFile's keys sealed under k at a new path.
func sealedFile(t *testing.T, k *keeper.Keeper) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys.json")
	writeFile(t, path, validFile, 0o600)
	if err := Update(path, NewSealer(k), func(*File) error { return nil }); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestUpdateSealsEverySecret(t *testing.T) {
	k := testkit.Keeper(t)
	path := sealedFile(t, k)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"0123456789abcdef", "fedcba9876543210", "aaaaaaaaaaaaaaaa", "éééééééé"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the file holds the secret %q in the clear", secret)
		}
	}
	var f fileForm
	if err := json.Unmarshal(data, &f); err != nil || f.DataKey == nil || len(f.Keys) != 4 {
		t.Fatalf("the file as stored: %v, %+v", err, f)
	}
	for _, st := range f.Keys {
		if st.Secret != "" || !keeper.IsSealed(st.SealedSecret) {
			t.Errorf("key %s is stored %+v", st.Kid, st)
		}
	}
	r, err := Load(path, NewSealer(k))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Lookup("k4"); got.Secret != "éééééééé" || got.Usable() || r.Plain() != 0 {
		t.Fatalf("k4 opened as %+v, plain %d", got, r.Plain())
	}
}

func TestLoadSealed(t *testing.T) {
	k := testkit.Keeper(t)
	path := sealedFile(t, k)
	tests := []struct {
		name   string
		sealer *Sealer
		want   error
	}{
		{"the keeper that sealed it", NewSealer(k), nil},
		{"no keeper", nil, ErrNoKeeper},
		{"another keeper", NewSealer(testkit.Keeper(t)), keeper.ErrUnwrap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(path, tt.sealer)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Load: %v, want %v", err, tt.want)
			}
		})
	}
}

func TestPlainFileIsReadThenSealed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	writeFile(t, path, validFile, 0o600)
	r, err := Load(path, nil)
	if err != nil || r.Plain() != 4 {
		t.Fatalf("a plain file: %v, plain %d", err, r.Plain())
	}
	s := NewSealer(testkit.Keeper(t))
	if err := Update(path, s, func(f *File) error { _, _, err := f.Rotate("c2", "", nil, false, time.Now()); return err }); err != nil {
		t.Fatal(err)
	}
	r, err = Load(path, s)
	if err != nil || r.Plain() != 0 || r.Len() != 5 {
		t.Fatalf("after a change: %v, plain %d, %d keys", err, r.Plain(), r.Len())
	}
	if k, _ := r.Lookup("k2"); k.Secret != "fedcba9876543210" {
		t.Fatal("a plain secret did not survive its sealing")
	}
}

// TestSealedSecretBoundToItsKey copies k2's sealed secret to k3: k3's no
// longer opens, and only k3 is refused; a later change keeps k3 as it was.
func TestSealedSecretBoundToItsKey(t *testing.T) {
	k := testkit.Keeper(t)
	path := sealedFile(t, k)
	data, _ := os.ReadFile(path)
	var f fileForm
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	f.Keys[2].SealedSecret = f.Keys[1].SealedSecret
	if err := write(path, f); err != nil {
		t.Fatal(err)
	}
	s := NewSealer(k)
	r, err := Load(path, s)
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := r.Lookup("k2")
	k3, _ := r.Lookup("k3")
	if !k2.Usable() || k3.Usable() || k3.Secret != "" || strings.Join(r.Unavailable(), ",") != "k3" {
		t.Fatalf("k2 %+v, k3 %+v, unavailable %v", k2.Usable(), k3, r.Unavailable())
	}
	if err := Update(path, s, func(f *File) error { _, err := f.Add("c3", "", "", "", false, time.Now()); return err }); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	if !strings.Contains(string(after), f.Keys[2].SealedSecret) {
		t.Fatal("a change lost the sealed secret that does not open")
	}
}

func TestRewrap(t *testing.T) {
	from, to := testkit.Keeper(t), testkit.Keeper(t)
	path := sealedFile(t, from)
	before, _ := Load(path, NewSealer(from))
	for _, tt := range []struct {
		name    string
		changed bool
	}{{"first run", true}, {"run again: nothing left to do", false}} {
		t.Run(tt.name, func(t *testing.T) {
			_, changed, err := Rewrap(path, from, to)
			if err != nil || changed != tt.changed {
				t.Fatalf("Rewrap = %v, %v; want changed %v", changed, err, tt.changed)
			}
		})
	}
	if _, err := Load(path, NewSealer(from)); !errors.Is(err, keeper.ErrUnwrap) {
		t.Fatalf("the old keeper still opens the file: %v", err)
	}
	after, err := Load(path, NewSealer(to))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range before.Keys() {
		if got, _ := after.Lookup(k.Kid); got.Secret != k.Secret {
			t.Fatalf("key %s changed in the rewrap", k.Kid)
		}
	}
}

// TestReloadCallsTheKeeperOnce: a sealer unwraps a file's data key once,
// however often the file is read.
func TestReloadCallsTheKeeperOnce(t *testing.T) {
	k := testkit.Keeper(t)
	path := sealedFile(t, k)
	s := NewSealer(k)
	calls := k.Calls()
	for range 5 {
		if _, err := Load(path, s); err != nil {
			t.Fatal(err)
		}
	}
	if got := k.Calls() - calls; got != 1 {
		t.Fatalf("5 loads called the keeper %d times, want 1", got)
	}
}

// TestUpdateKeepsKinds: kindsFile, sealed by a change and changed again,
// keeps each key's enc and require_fresh beside its sealed secret, and
// reads back as the file of plain secrets does, with the keeper and
// without it (List).
func TestUpdateKeepsKinds(t *testing.T) {
	t.Parallel()
	plain := filepath.Join(t.TempDir(), "keys.json")
	writeFile(t, plain, kindsFile, 0o600)
	sealed := filepath.Join(t.TempDir(), "keys.json")
	writeFile(t, sealed, kindsFile, 0o600)
	s := NewSealer(testkit.Keeper(t))
	for _, change := range []func(*File) error{
		func(*File) error { return nil },
		func(f *File) error { return f.Retire("k-old", true, time.Now()) },
	} {
		if err := Update(sealed, s, change); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(sealed)
	if strings.Contains(string(data), gcmSecret) {
		t.Fatal("the sealed file holds an A256GCM secret in the clear")
	}
	want, err := Load(plain, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path string
		sealer     *Sealer
	}{{"plain secrets", plain, nil}, {"sealed secrets", sealed, s}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := Load(tt.path, tt.sealer)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range want.Keys() {
				k, ok := r.Lookup(w.Kid)
				if !ok || k.Secret != w.Secret || kindOf(k) != kindsOf[w.Kid] {
					t.Errorf("%s reads as %+v, want %+v of its secret", w.Kid, kindOf(k), kindsOf[w.Kid])
				}
			}
		})
	}
	listed, err := List(sealed)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range listed {
		if got := (kind{l.Enc, l.RequireFresh}); got != kindsOf[l.Kid] {
			t.Errorf("List: %s is %+v, want %+v", l.Kid, got, kindsOf[l.Kid])
		}
	}
}

// TestAddKeepsKinds: a key of each kind that hdc keys add --registry
// makes is written, and read back, as it was made.
func TestAddKeepsKinds(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keys.json")
	s := NewSealer(testkit.Keeper(t))
	for _, tt := range []struct {
		name         string
		enc          string
		requireFresh bool
		want         kind
	}{
		{"the default", "", false, kind{jwe.EncA128CBCHS256, false}},
		{"A128CBC-HS256 --require-fresh", jwe.EncA128CBCHS256, true, kind{jwe.EncA128CBCHS256, true}},
		{"A256GCM", jwe.EncA256GCM, false, kind{jwe.EncA256GCM, true}},
		{"A256GCM --require-fresh", jwe.EncA256GCM, true, kind{jwe.EncA256GCM, true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var added Entry
			if err := Update(path, s, func(f *File) (err error) {
				added, err = f.Add("c1", "", "", tt.enc, tt.requireFresh, time.Now())
				return err
			}); err != nil {
				t.Fatal(err)
			}
			r, err := Load(path, s)
			if err != nil {
				t.Fatal(err)
			}
			if k, ok := r.Lookup(added.Kid); !ok || k.Secret != added.Secret || kindOf(k) != tt.want {
				t.Fatalf("the added key reads as %+v, want %+v of its secret", kindOf(k), tt.want)
			}
		})
	}
}
