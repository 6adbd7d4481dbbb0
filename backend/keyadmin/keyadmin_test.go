package keyadmin

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/jwe"
)

const (
	client1 = "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01"
	client2 = "6b2d0b63-4c8f-4e1f-8a54-3f9f2d7c8b02"
)

var t0 = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)

// alice is the operator who makes the changes.
var alice = audittest.Operator

// service returns the service over a new SQLite store holding client1 and
// client2 of workspace w1, and the store.
func service(t *testing.T) (*Service, store.Store) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.EnsureWorkspace(t.Context(), "w1", t0); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{client1, client2} {
		e := audit.Event{At: t0, Action: audit.ClientCreate, Outcome: audit.Success, Workspace: "w1", Entity: audit.Entity{Kind: audit.EntityClient, ID: id}}
		if err := st.CreateClient(t.Context(), store.Client{ID: id, WorkspaceID: "w1", SecretHash: "x", Status: store.ClientActive, CreatedAt: t0}, e); err != nil {
			t.Fatal(err)
		}
	}
	s := New(st)
	now := t0
	s.now = func() time.Time { now = now.Add(time.Minute); return now }
	return s, st
}

// lastRecord returns the last record of w1's trail.
func lastRecord(t *testing.T, st store.Store) audit.Record {
	t.Helper()
	rs, err := st.ListAudit(t.Context(), store.AuditFilter{Workspace: "w1"})
	if err != nil || len(rs) == 0 {
		t.Fatalf("w1's trail: %v, %v", rs, err)
	}
	return rs[len(rs)-1]
}

func TestAdd(t *testing.T) {
	t.Parallel()
	s, st := service(t)
	k, err := s.Add(t.Context(), AddRequest{By: alice, Client: client1, Enc: jwe.EncA256GCM})
	if err != nil || k.Secret == "" || k.Kind() != (clientkey.Kind{Enc: jwe.EncA256GCM, Fresh: true}) {
		t.Fatalf("Add: %+v, %v", k, err)
	}
	if r := lastRecord(t, st); r.Action != audit.KeyAdd || r.Entity.ID != k.Kid || r.Person != alice || r.Owner != client1 {
		t.Fatalf("the record: %+v; want the key of client1 added by alice", r)
	}
	for _, tt := range []struct {
		name string
		r    AddRequest
		want error
	}{
		{"no such client", AddRequest{By: alice, Client: "nobody"}, ErrNoClient},
		{"a kid taken", AddRequest{By: alice, Client: client2, Kid: k.Kid}, ErrKidTaken},
		{"nobody's change", AddRequest{Client: client2}, audit.ErrNoPerson},
	} {
		if _, err := s.Add(t.Context(), tt.r); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	if _, err := s.Add(t.Context(), AddRequest{By: alice, Client: client1, Secret: "short"}); err == nil {
		t.Error("a secret of the wrong length was taken")
	}
}

// TestRotateKeepsTheKind (fourth review, finding 11; first deployment,
// finding 8): a rotation keeps the kind of the key it replaces, refuses a
// weaker one unless allowed, and its record names the key it made and
// the key it replaced, by either of which a search finds it.
func TestRotateKeepsTheKind(t *testing.T) {
	t.Parallel()
	s, st := service(t)
	old, err := s.Add(t.Context(), AddRequest{By: alice, Client: client1, Enc: jwe.EncA256GCM})
	if err != nil {
		t.Fatal(err)
	}
	rot, err := s.Rotate(t.Context(), RotateRequest{By: alice, Client: client1})
	if err != nil || rot.Key.Kind() != old.Kind() || !slices.Equal(rot.Retiring, []string{old.Kid}) || rot.Key.Secret == "" {
		t.Fatalf("Rotate: %+v, %v; want a key of %v replacing %s", rot, err, old.Kind(), old.Kid)
	}
	r := lastRecord(t, st)
	if r.Action != audit.KeyRotate || r.Entity.ID != rot.Key.Kid || !slices.Equal(r.Replaced, []string{old.Kid}) || r.Weakened != nil || r.Person != alice || r.Owner != client1 {
		t.Fatalf("the rotation's record: %+v", r)
	}
	for _, kid := range []string{old.Kid, rot.Key.Kid} {
		found, err := st.ListAudit(t.Context(), store.AuditFilter{Workspace: "w1", Entity: kid})
		if err != nil || !slices.ContainsFunc(found, func(f audit.Record) bool { return f.Seq == r.Seq }) {
			t.Fatalf("a search by %s: %v, %v; want the rotation", kid, found, err)
		}
	}

	var weaker *clientkey.WeakerError
	cbc := RotateRequest{By: alice, Client: client1, Enc: jwe.EncA128CBCHS256}
	if _, err := s.Rotate(t.Context(), cbc); !errors.As(err, &weaker) || weaker.Replaced != rot.Key.Kid {
		t.Fatalf("a rotation to A128CBC-HS256: %v, want a *clientkey.WeakerError naming %s", err, rot.Key.Kid)
	}
	cbc.AllowWeaker = true
	down, err := s.Rotate(t.Context(), cbc)
	if err != nil || down.Key.Kind() != (clientkey.Kind{Enc: jwe.EncA128CBCHS256, Fresh: true}) || !slices.Equal(down.Lost, []string{clientkey.LostEnc}) {
		t.Fatalf("an allowed rotation to A128CBC-HS256: %+v, %v", down, err)
	}
	if r := lastRecord(t, st); !slices.Equal(r.Weakened, []string{clientkey.LostEnc}) {
		t.Fatalf("the weakening rotation's record: %+v", r)
	}
	if _, err := s.Rotate(t.Context(), RotateRequest{By: alice, Client: client2}); !errors.Is(err, ErrNoKeys) {
		t.Fatalf("the rotation of a client with no key: %v, want ErrNoKeys", err)
	}
	if _, err := s.Rotate(t.Context(), RotateRequest{Client: client1}); !errors.Is(err, audit.ErrNoPerson) {
		t.Fatalf("a rotation that names nobody: %v, want audit.ErrNoPerson", err)
	}
	if _, err := s.Retire(t.Context(), RetireRequest{Kid: old.Kid}); !errors.Is(err, audit.ErrNoPerson) {
		t.Fatalf("a retirement that names nobody: %v, want audit.ErrNoPerson", err)
	}
}

// TestDryRunsChangeNothing: a dry run says what the change would do,
// refusals included, and the store and its trail stay as they were.
func TestDryRunsChangeNothing(t *testing.T) {
	t.Parallel()
	s, st := service(t)
	k, err := s.Add(t.Context(), AddRequest{By: alice, Client: client1})
	if err != nil {
		t.Fatal(err)
	}
	before := lastRecord(t, st)
	rot, err := s.Rotate(t.Context(), RotateRequest{By: alice, Client: client1, Enc: jwe.EncA256GCM, DryRun: true})
	if err != nil || !rot.DryRun || rot.Key.Secret != "" || rot.Key.ContentEncryption() != jwe.EncA256GCM || !slices.Equal(rot.Retiring, []string{k.Kid}) {
		t.Fatalf("a dry rotation: %+v, %v", rot, err)
	}
	var lockOut *clientkey.LockOutError
	if _, err := s.Retire(t.Context(), RetireRequest{By: alice, Kid: k.Kid, DryRun: true}); !errors.As(err, &lockOut) {
		t.Fatalf("a dry retirement of the last active key: %v, want a *clientkey.LockOutError", err)
	}
	ret, err := s.Retire(t.Context(), RetireRequest{By: alice, Kid: k.Kid, Force: true, DryRun: true})
	if err != nil || !ret.Changed || ret.Key.Status != clientkey.Retired || ret.Key.ClientID != client1 {
		t.Fatalf("a dry forced retirement: %+v, %v", ret, err)
	}
	keys, err := s.List(t.Context(), client1)
	if err != nil || len(keys) != 1 || keys[0].Status != clientkey.Active {
		t.Fatalf("after the dry runs: %+v, %v", keys, err)
	}
	if r := lastRecord(t, st); r.Seq != before.Seq {
		t.Fatalf("a dry run was recorded: %+v", r)
	}
}

// TestRetireGuardsTheLastActiveKey (first deployment, finding 7): the
// retirement of a client's last active key is refused unless forced; of a
// retiring key, allowed.
func TestRetireGuardsTheLastActiveKey(t *testing.T) {
	t.Parallel()
	s, st := service(t)
	k, err := s.Add(t.Context(), AddRequest{By: alice, Client: client1})
	if err != nil {
		t.Fatal(err)
	}
	var lockOut *clientkey.LockOutError
	if _, err := s.Retire(t.Context(), RetireRequest{By: alice, Kid: k.Kid}); !errors.As(err, &lockOut) || lockOut.Client != client1 {
		t.Fatalf("the retirement of the only key: %v, want a *clientkey.LockOutError", err)
	}
	if _, err := s.Rotate(t.Context(), RotateRequest{By: alice, Client: client1}); err != nil {
		t.Fatal(err)
	}
	if ret, err := s.Retire(t.Context(), RetireRequest{By: alice, Kid: k.Kid}); err != nil || !ret.Changed || ret.Key.Status != clientkey.Retired {
		t.Fatalf("the retirement of the retiring key: %+v, %v", ret, err)
	}
	if r := lastRecord(t, st); r.Action != audit.KeyRetire || r.Entity.ID != k.Kid || r.Owner != client1 {
		t.Fatalf("the retirement's record: %+v; want the key of client1", r)
	}
	if _, err := s.Retire(t.Context(), RetireRequest{By: alice, Kid: "k-none"}); !errors.Is(err, ErrNoKey) {
		t.Fatalf("the retirement of no key: %v, want ErrNoKey", err)
	}
}

func TestImportAndEnsure(t *testing.T) {
	t.Parallel()
	s, _ := service(t)
	keys := []clientkey.Key{
		clientkey.New(client1, "k-a", "", jwe.EncA256GCM, false, t0),
		clientkey.New("a-client-elsewhere", "k-b", "", "", true, t0),
	}
	if n, err := s.Import(t.Context(), audittest.Operator, keys); err != nil || n != 2 {
		t.Fatalf("Import: %d, %v", n, err)
	}
	if _, err := s.Import(t.Context(), audittest.Operator, keys[1:]); !errors.Is(err, ErrKidTaken) {
		t.Fatalf("an import of a kid taken: %v, want ErrKidTaken", err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Ensure(t.Context(), audittest.Operator, client2, "k-demo", "0123456789abcdef"))
	must(s.Ensure(t.Context(), audittest.Operator, client2, "k-demo", "fedcba9876543210")) // there already: kept
	listed, err := s.List(t.Context(), "")
	must(err)
	kinds := map[string]clientkey.Kind{}
	for _, k := range listed {
		kinds[k.Kid] = clientkey.Kind{Enc: k.Enc, Fresh: k.RequireFresh}
	}
	want := map[string]clientkey.Kind{"k-a": {Enc: jwe.EncA256GCM, Fresh: true}, "k-b": {Enc: jwe.EncA128CBCHS256, Fresh: true},
		"k-demo": {Enc: jwe.EncA128CBCHS256}}
	if len(kinds) != len(want) || kinds["k-a"] != want["k-a"] || kinds["k-b"] != want["k-b"] || kinds["k-demo"] != want["k-demo"] {
		t.Fatalf("the keys: %v, want %v", kinds, want)
	}
}
