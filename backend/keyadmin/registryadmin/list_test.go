package registryadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/problem"
)

// TestListKeys: the file's keys a query selects, in kid order, a page at a
// time; a workspace is refused, as is a query the API refuses.
func TestListKeys(t *testing.T) {
	t.Parallel()
	s, path := service(t, nil)
	ctx := asAlice(t.Context())
	for i := range 5 {
		client := client1
		if i%2 == 1 {
			client = stray
		}
		if _, err := s.AddKey(ctx, client, adminapi.AddKeyRequest{Kid: fmt.Sprintf("k-%d", 4-i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RotateKey(ctx, stray, adminapi.RotateKeyRequest{}); err != nil {
		t.Fatal(err)
	}
	reader := New(path, nil, nil) // listing needs no keeper
	kids := func(q adminapi.KeyQuery) ([]string, error) {
		all, err := adminapi.All(ctx, func(ctx context.Context, cursor string) (adminapi.Page[adminapi.KeyInfo], error) {
			q.Cursor = cursor
			return reader.ListKeys(ctx, q)
		})
		var out []string
		for _, k := range all {
			out = append(out, k.Kid)
		}
		return out, err
	}
	tests := []struct {
		name string
		q    adminapi.KeyQuery
		want []string
	}{
		{"every key, one page", adminapi.KeyQuery{}, []string{"k-0", "k-1", "k-2", "k-3", "k-4"}},
		{"every key, pages of two", adminapi.KeyQuery{Limit: 2}, []string{"k-0", "k-1", "k-2", "k-3", "k-4"}},
		{"a client's", adminapi.KeyQuery{Client: client1, Limit: 1}, []string{"k-0", "k-2", "k-4"}},
		{"the retiring", adminapi.KeyQuery{Status: clientkey.Retiring}, []string{"k-1", "k-3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kids(tt.q)
			// The rotation's key, of a kid generated (k_…), aside.
			if got = slices.DeleteFunc(got, func(k string) bool { return k[:2] != "k-" }); err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("ListKeys(%+v) = %v, %v; want %v", tt.q, got, err, tt.want)
			}
		})
	}
	for _, q := range []adminapi.KeyQuery{{Workspace: "w1"}, {Limit: adminapi.MaxLimit + 1}, {Status: "valid"}} {
		var p *problem.Problem
		if _, err := reader.ListKeys(ctx, q); !errors.As(err, &p) || p.Code != problem.CodeInvalidRequest {
			t.Errorf("ListKeys(%+v): %v, want an invalid_request", q, err)
		}
	}
}

// TestImportInto: every key of the file goes into the database as it is,
// each recorded for the context's person; again, none goes, and the error
// says so.
func TestImportInto(t *testing.T) {
	t.Parallel()
	s, _ := service(t, nil)
	ctx := asAlice(t.Context())
	added, err := s.AddKey(ctx, client1, adminapi.AddKeyRequest{Kid: "k-one", Secret: "0123456789abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RotateKey(ctx, client1, adminapi.RotateKeyRequest{}); err != nil {
		t.Fatal(err)
	}
	st := newStore(t)
	db := keyadmin.New(st)
	if _, err := s.ImportInto(t.Context(), db); !errors.Is(err, audit.ErrNoPerson) {
		t.Fatalf("an import for no one: %v", err)
	}
	if n, err := s.ImportInto(ctx, db); err != nil || n != 2 {
		t.Fatalf("ImportInto = %d, %v", n, err)
	}
	k, err := st.ClientKey(t.Context(), "k-one")
	if err != nil || k.Secret != added.Secret || k.Status != clientkey.Retiring || k.WorkspaceID != "w1" {
		t.Fatalf("k-one in the database: %+v, %v", k, err)
	}
	rs, err := st.ListAudit(t.Context(), store.AuditFilter{Workspace: "w1", Entity: "k-one"})
	if err != nil || len(rs) != 1 || rs[0].Action != audit.KeyAdd || rs[0].Person != asPerson(ctx) {
		t.Fatalf("k-one's records: %+v, %v", rs, err)
	}
	if n, err := s.ImportInto(ctx, db); err == nil || n != 0 {
		t.Fatalf("importing again: %d, %v", n, err)
	}
}

// asPerson is the person ctx acts for.
func asPerson(ctx context.Context) audit.Person {
	p, _ := audit.PersonFrom(ctx)
	return p
}
