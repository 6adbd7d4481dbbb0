package registryadmin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

const (
	client1 = "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01"
	client2 = "6b2d0b63-4c8f-4e1f-8a54-3f9f2d7c8b02"
	// stray is a client of another installation, which the database
	// does not know.
	stray = "c-elsewhere"
)

var t0 = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)

// trail is the backend's database of the tests: a SQLite store of
// workspace w1 with client1 and client2. It refuses records while refuse
// is set, and calls onRecord before each.
type trail struct {
	store.Store
	refuse   error
	onRecord func()
}

// AppendAudit implements store.AuditAppender.
func (tr *trail) AppendAudit(ctx context.Context, e audit.Event) (audit.Record, error) {
	if tr.onRecord != nil {
		tr.onRecord()
	}
	if tr.refuse != nil {
		return audit.Record{}, tr.refuse
	}
	return tr.Store.AppendAudit(ctx, e)
}

// newStore returns a SQLite store holding client1 and client2 of
// workspace w1.
func newStore(t *testing.T) store.Store {
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
	return st
}

// service returns the administration of a new registry file in a
// directory of its own, its changes recorded in tr (none when nil).
func service(t *testing.T, tr *trail) (*Service, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "registry", "keys.json")
	if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	s := New(path, registryfile.NewSealer(testkit.Keeper(t)), nil)
	if tr != nil {
		s.trail = tr
	}
	return s, path
}

// asAlice is ctx acting for the operator alice.
func asAlice(ctx context.Context) context.Context { return audit.WithPerson(ctx, audittest.Operator) }

// kidsIn returns the kids of the registry file at path, none when there
// is no file yet.
func kidsIn(t *testing.T, path string) []string {
	t.Helper()
	keys, err := registryfile.List(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, k := range keys {
		kids = append(kids, k.Kid)
	}
	return kids
}

// TestChangesRecordedBeforeTheWrite: each change is recorded in the trail
// of its client's workspace (the installation's for a client the
// database does not know), in the name of the context's person, before
// the file holds it; a rotation's record names the keys it retired.
func TestChangesRecordedBeforeTheWrite(t *testing.T) {
	t.Parallel()
	tr := &trail{Store: newStore(t)}
	s, path := service(t, tr)
	var held [][]string // the kids the file held at each record
	tr.onRecord = func() { held = append(held, kidsIn(t, path)) }
	ctx := asAlice(t.Context())

	if _, err := s.AddKey(ctx, client1, adminapi.AddKeyRequest{Kid: "k-one"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddKey(ctx, stray, adminapi.AddKeyRequest{Kid: "k-stray"}); err != nil {
		t.Fatal(err)
	}
	rot, err := s.RotateKey(ctx, client1, adminapi.RotateKeyRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RetireKey(ctx, "k-one", adminapi.RetireKeyRequest{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		workspace, kid, owner string
		action                audit.Action
		replaced              []string
		before                []string // the kids the file held when it was recorded
	}{
		{"w1", "k-one", client1, audit.KeyAdd, nil, nil},
		{"", "k-stray", "", audit.KeyAdd, nil, []string{"k-one"}}, // stray is no UUID: not quoted
		{"w1", rot.Key.Kid, client1, audit.KeyRotate, []string{"k-one"}, []string{"k-one", "k-stray"}},
		{"w1", "k-one", client1, audit.KeyRetire, nil, []string{"k-one", "k-stray", rot.Key.Kid}},
	}
	var got []audit.Record
	for _, ws := range []string{"w1", ""} {
		rs, err := tr.ListAudit(t.Context(), store.AuditFilter{Workspace: ws})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.Entity.Kind == audit.EntityKey {
				got = append(got, r)
			}
		}
	}
	slices.SortFunc(got, func(a, b audit.Record) int { return a.At.Compare(b.At) })
	if len(got) != len(tests) || len(held) != len(tests) {
		t.Fatalf("%d records of keys, %d made, want %d: %+v", len(got), len(held), len(tests), got)
	}
	for i, tt := range tests {
		r := got[i]
		if r.Workspace != tt.workspace || r.Entity.ID != tt.kid || r.Action != tt.action || r.Outcome != audit.Success ||
			r.Person != audittest.Operator || !slices.Equal(r.Replaced, tt.replaced) || r.Owner != tt.owner {
			t.Errorf("record %d: %+v; want %s of %s of %s in %q, replacing %v", i, r.Event, tt.action, tt.kid, tt.owner, tt.workspace, tt.replaced)
		}
		if !slices.Equal(held[i], tt.before) {
			t.Errorf("record %d was made when the file held %v, want %v", i, held[i], tt.before)
		}
	}
}

// TestRefusedRecordChangesNothing: a record the trail refuses fails the
// change, saying why, and the file is not written.
func TestRefusedRecordChangesNothing(t *testing.T) {
	t.Parallel()
	tr := &trail{Store: newStore(t)}
	s, path := service(t, tr)
	ctx := asAlice(t.Context())
	if _, err := s.AddKey(ctx, client1, adminapi.AddKeyRequest{Kid: "k-one"}); err != nil {
		t.Fatal(err)
	}
	tr.refuse = errors.New("audit disk full")
	for name, change := range map[string]func() error{
		"add":    func() error { _, err := s.AddKey(ctx, client1, adminapi.AddKeyRequest{Kid: "k-two"}); return err },
		"rotate": func() error { _, err := s.RotateKey(ctx, client1, adminapi.RotateKeyRequest{}); return err },
		"retire": func() error { _, err := s.RetireKey(ctx, "k-one", adminapi.RetireKeyRequest{Force: true}); return err },
	} {
		t.Run(name, func(t *testing.T) {
			err := change()
			if err == nil || !strings.Contains(err.Error(), "audit disk full") || !strings.Contains(err.Error(), "the registry is unchanged") {
				t.Fatalf("%s with the trail refusing: %v", name, err)
			}
		})
	}
	keys, err := registryfile.List(path)
	if err != nil || len(keys) != 1 || keys[0].Status != clientkey.Active {
		t.Fatalf("the file after the refusals: %+v, %v", keys, err)
	}
}

// TestFailedWriteRecorded: when the file cannot be written once its
// change is recorded, a record of the change with outcome failed follows,
// and the change fails.
func TestFailedWriteRecorded(t *testing.T) {
	t.Parallel()
	tr := &trail{Store: newStore(t)}
	s, path := service(t, tr)
	ctx := asAlice(t.Context())
	if _, err := s.AddKey(ctx, client1, adminapi.AddKeyRequest{Kid: "k-one"}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	tr.onRecord = func() {
		// The directory goes, a file in its place: the new file cannot be
		// made there.
		tr.onRecord = nil
		if err := os.Rename(dir, dir+".moved"); err != nil {
			t.Error(err)
		}
		if err := os.WriteFile(dir, nil, 0o600); err != nil {
			t.Error(err)
		}
	}
	if _, err := s.AddKey(ctx, client1, adminapi.AddKeyRequest{Kid: "k-two"}); err == nil {
		t.Fatal("the add succeeded though the file could not be written")
	}
	rs, err := tr.ListAudit(t.Context(), store.AuditFilter{Workspace: "w1", Entity: "k-two"})
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []audit.Outcome
	for _, r := range rs {
		outcomes = append(outcomes, r.Outcome)
	}
	if want := []audit.Outcome{audit.Success, audit.Failed}; !slices.Equal(outcomes, want) || rs[1].Action != audit.KeyAdd {
		t.Fatalf("the trail records k-two's add as %v, want %v", outcomes, want)
	}
	if kids := kidsIn(t, filepath.Join(dir+".moved", "keys.json")); !slices.Equal(kids, []string{"k-one"}) {
		t.Fatalf("the file holds %v", kids)
	}
}

// TestUnaudited: with no trail, a change is made and Unaudited told of
// it; a dry run changes nothing and tells nothing.
func TestUnaudited(t *testing.T) {
	t.Parallel()
	s, path := service(t, nil)
	var told []audit.Action
	s.Unaudited = func(a audit.Action) { told = append(told, a) }
	ctx := asAlice(t.Context())
	if _, err := s.AddKey(ctx, stray, adminapi.AddKeyRequest{Kid: "k-one"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RotateKey(ctx, stray, adminapi.RotateKeyRequest{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RetireKey(ctx, "k-one", adminapi.RetireKeyRequest{Force: true}); err != nil {
		t.Fatal(err)
	}
	if want := []audit.Action{audit.KeyAdd, audit.KeyRetire}; !slices.Equal(told, want) {
		t.Fatalf("told of %v, want %v", told, want)
	}
	if kids := kidsIn(t, path); !slices.Equal(kids, []string{"k-one"}) {
		t.Fatalf("the file holds %v", kids)
	}
}

// TestChangesNeedAPersonAndAKeeper: a change acting for no one, or without
// the keeper, is refused and writes nothing; listing needs neither.
func TestChangesNeedAPersonAndAKeeper(t *testing.T) {
	t.Parallel()
	s, path := service(t, nil)
	if _, err := s.AddKey(t.Context(), client1, adminapi.AddKeyRequest{}); !errors.Is(err, audit.ErrNoPerson) {
		t.Fatalf("an add for no one: %v", err)
	}
	if _, err := New(path, nil, nil).AddKey(asAlice(t.Context()), client1, adminapi.AddKeyRequest{}); !errors.Is(err, registryfile.ErrNoKeeper) {
		t.Fatalf("an add without the keeper: %v", err)
	}
	if kids := kidsIn(t, path); kids != nil {
		t.Fatalf("the file holds %v", kids)
	}
	if _, err := s.AddKey(asAlice(t.Context()), client1, adminapi.AddKeyRequest{Kid: "k-one", Enc: jwe.EncA256GCM}); err != nil {
		t.Fatal(err)
	}
	got, err := New(path, nil, nil).GetKey(t.Context(), "k-one")
	if err != nil || got.Kid != "k-one" || got.Enc != jwe.EncA256GCM || !got.RequireFresh || got.Status != clientkey.Active {
		t.Fatalf("GetKey without a keeper = %+v, %v", got, err)
	}
}
