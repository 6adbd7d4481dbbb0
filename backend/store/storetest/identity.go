package storetest

import (
	"bytes"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

func testWorkspaces(t *testing.T, s Store) {
	created, err := s.EnsureWorkspace(ctx(t), "w1", t0)
	must(t, err)
	if !created {
		t.Fatal("first EnsureWorkspace did not create")
	}
	created, err = s.EnsureWorkspace(ctx(t), "w1", at(time.Hour))
	must(t, err)
	if created {
		t.Fatal("second EnsureWorkspace created again")
	}
	w, err := s.GetWorkspace(ctx(t), "w1")
	must(t, err)
	if w.ID != "w1" || !w.CreatedAt.Equal(at(0)) {
		t.Fatalf("workspace = %+v, want created at %v (microseconds kept, first creation kept)", w, at(0))
	}
	_, err = s.GetWorkspace(ctx(t), "w2")
	wantErr(t, err, store.ErrNotFound)
	must(t, s.Ping(ctx(t)))
}

func testClients(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	c2 := store.Client{ID: "c2", WorkspaceID: "w1", SecretHash: "h2", Status: store.ClientActive, CreatedAt: at(time.Second)}
	must(t, s.CreateClient(ctx(t), c2, operator(audit.ClientCreate, "w1")))
	wantErr(t, s.CreateClient(ctx(t), c2, operator(audit.ClientCreate, "w1")), store.ErrConflict)
	wantErr(t, s.CreateClient(ctx(t), store.Client{ID: "c3", WorkspaceID: "nope", SecretHash: "h", Status: store.ClientActive, CreatedAt: t0}, operator(audit.ClientCreate, "nope")), store.ErrNotFound)

	got, err := s.GetClient(ctx(t), "c2")
	must(t, err)
	if !reflect.DeepEqual(got, c2) {
		t.Fatalf("GetClient = %+v, want %+v", got, c2)
	}
	_, err = s.GetClient(ctx(t), "c3")
	wantErr(t, err, store.ErrNotFound)

	must(t, s.SetClientStatus(ctx(t), "c1", store.ClientDisabled, operator(audit.ClientDisable, "w1")))
	wantErr(t, s.SetClientStatus(ctx(t), "c3", store.ClientDisabled, operator(audit.ClientDisable, "w1")), store.ErrNotFound)
	list, err := s.ListClients(ctx(t), store.ClientFilter{})
	must(t, err)
	if len(list) != 2 || list[0].ID != "c1" || list[1].ID != "c2" || list[0].Status != store.ClientDisabled {
		t.Fatalf("ListClients = %+v", list)
	}
}

// testClientPages: clients are listed a page at a time in creation order,
// by workspace and status, each once.
func testClientPages(t *testing.T, s Store) {
	seed(t, s, "w1", "c0")
	_, err := s.EnsureWorkspace(ctx(t), "w2", t0)
	must(t, err)
	for i, c := range []struct{ id, ws string }{{"c3", "w2"}, {"c1", "w1"}, {"c2", "w2"}, {"c4", "w1"}} {
		// c2 and c4 share a creation time: the id orders them.
		created := at(time.Duration(min(i, 2)+1) * time.Second)
		must(t, s.CreateClient(ctx(t), store.Client{ID: c.id, WorkspaceID: c.ws, SecretHash: "h", Status: store.ClientActive, CreatedAt: created},
			operator(audit.ClientCreate, c.ws)))
	}
	must(t, s.SetClientStatus(ctx(t), "c2", store.ClientDisabled, operator(audit.ClientDisable, "w2")))
	tests := []struct {
		name string
		f    store.ClientFilter
		want []string
	}{
		{"every client", store.ClientFilter{}, []string{"c0", "c3", "c1", "c2", "c4"}},
		{"a page", store.ClientFilter{Limit: 2}, []string{"c0", "c3"}},
		{"the next page", store.ClientFilter{After: store.ClientCursor{CreatedAt: at(time.Second), ID: "c3"}, Limit: 2}, []string{"c1", "c2"}},
		{"within one time", store.ClientFilter{After: store.ClientCursor{CreatedAt: at(2 * time.Second), ID: "c1"}}, []string{"c2", "c4"}},
		{"a workspace", store.ClientFilter{WorkspaceID: "w2"}, []string{"c3", "c2"}},
		{"a status", store.ClientFilter{Status: store.ClientDisabled}, []string{"c2"}},
		{"both", store.ClientFilter{WorkspaceID: "w1", Status: store.ClientActive, Limit: 5}, []string{"c0", "c1", "c4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := s.ListClients(ctx(t), tt.f)
			must(t, err)
			var got []string
			for _, c := range list {
				got = append(got, c.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("ListClients(%+v) = %v, want %v", tt.f, got, tt.want)
			}
		})
	}
	ws, err := s.ListWorkspaces(ctx(t), "", 0)
	must(t, err)
	if len(ws) != 2 || ws[0].ID != "w1" || ws[1].ID != "w2" {
		t.Fatalf("ListWorkspaces = %+v", ws)
	}
	if ws, err = s.ListWorkspaces(ctx(t), "w1", 1); err != nil || len(ws) != 1 || ws[0].ID != "w2" {
		t.Fatalf("ListWorkspaces after w1 = %+v, %v", ws, err)
	}
}

func testReplaceSecretHash(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	c, err := s.GetClient(ctx(t), "c1")
	must(t, err)
	must(t, s.ReplaceSecretHash(ctx(t), "c1", c.SecretHash, "moved"))
	// Where the hash is no longer the old one, nothing changes.
	must(t, s.ReplaceSecretHash(ctx(t), "c1", c.SecretHash, "moved again"))
	must(t, s.ReplaceSecretHash(ctx(t), "c9", "x", "y"))
	if got, err := s.GetClient(ctx(t), "c1"); err != nil || got.SecretHash != "moved" {
		t.Fatalf("secret hash %q, %v; want moved", got.SecretHash, err)
	}
}

func testHashKey(t *testing.T, s Store) {
	first := bytes.Repeat([]byte{1}, 32)
	got, err := s.HashKey(ctx(t), "client-secrets", first, t0)
	must(t, err)
	if !bytes.Equal(got, first) {
		t.Fatalf("the first key = %x", got)
	}
	// Later calls get the stored key, whatever they offer; another name
	// has its own.
	if got, err = s.HashKey(ctx(t), "client-secrets", bytes.Repeat([]byte{2}, 32), t0); err != nil || !bytes.Equal(got, first) {
		t.Fatalf("the key again = %x, %v", got, err)
	}
	if got, err = s.HashKey(ctx(t), "other", bytes.Repeat([]byte{3}, 32), t0); err != nil || got[0] != 3 {
		t.Fatalf("another name's key = %x, %v", got, err)
	}
	// Processes asking at once all get one key.
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			keys[i], _ = s.HashKey(ctx(t), "concurrent", bytes.Repeat([]byte{byte(10 + i)}, 32), t0)
		})
	}
	wg.Wait()
	for _, k := range keys {
		if len(k) != 32 || !bytes.Equal(k, keys[0]) {
			t.Fatalf("concurrent first calls got %x", keys)
		}
	}
}

func testSharingGrants(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	_, err := s.EnsureWorkspace(ctx(t), "w2", t0)
	must(t, err)
	g := store.SharingGrant{ID: "g1", WorkspaceID: "w2", ClientID: "c1", KeyHash: bytes.Repeat([]byte{7}, 32), CreatedAt: at(0)}
	must(t, s.CreateSharingGrant(ctx(t), g, operator(audit.SharingGrant, "w2")))
	dup := g
	dup.ID = "g2"
	wantErr(t, s.CreateSharingGrant(ctx(t), dup, operator(audit.SharingGrant, "w2")), store.ErrConflict)
	orphan := store.SharingGrant{ID: "g3", WorkspaceID: "w2", ClientID: "nope", KeyHash: []byte{1}, CreatedAt: t0}
	wantErr(t, s.CreateSharingGrant(ctx(t), orphan, operator(audit.SharingGrant, "w2")), store.ErrNotFound)

	got, err := s.GetSharingGrantByKeyHash(ctx(t), g.KeyHash)
	must(t, err)
	if got.ID != "g1" || got.WorkspaceID != "w2" || got.ClientID != "c1" || !got.RevokedAt.IsZero() || !got.CreatedAt.Equal(g.CreatedAt) {
		t.Fatalf("grant = %+v", got)
	}
	_, err = s.GetSharingGrantByKeyHash(ctx(t), bytes.Repeat([]byte{8}, 32))
	wantErr(t, err, store.ErrNotFound)

	must(t, s.RevokeSharingGrant(ctx(t), "g1", at(time.Minute), operator(audit.SharingRevoke, "w2")))
	must(t, s.RevokeSharingGrant(ctx(t), "g1", at(time.Hour), operator(audit.SharingRevoke, "w2")))
	got, err = s.GetSharingGrant(ctx(t), "g1")
	must(t, err)
	if !got.RevokedAt.Equal(at(time.Minute)) {
		t.Fatalf("RevokedAt = %v, want the first revocation %v", got.RevokedAt, at(time.Minute))
	}
	wantErr(t, s.RevokeSharingGrant(ctx(t), "g9", t0, operator(audit.SharingRevoke, "w2")), store.ErrNotFound)
	_, err = s.GetSharingGrant(ctx(t), "g9")
	wantErr(t, err, store.ErrNotFound)
	list, err := s.ListSharingGrants(ctx(t), store.GrantFilter{})
	must(t, err)
	if len(list) != 1 || list[0].ID != "g1" {
		t.Fatalf("ListSharingGrants = %+v", list)
	}
}
