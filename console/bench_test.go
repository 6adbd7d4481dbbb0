package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/internal/clientkey"
)

// cannedAPI answers every read with full pages made once: the console's
// own cost, without the API's (BenchmarkListKeysPage in
// backend/store/postgres measures the store's page under 1,000,000 keys).
type cannedAPI struct {
	adminapi.API // the changes: not called
	clients      adminapi.Page[adminapi.Client]
	keys         adminapi.Page[adminapi.KeyInfo]
}

func newCannedAPI() *cannedAPI {
	now := time.Now()
	c := &cannedAPI{}
	for i := range pageSize {
		c.clients.Items = append(c.clients.Items, adminapi.Client{ClientID: fmt.Sprintf("%08d-0000-4000-8000-000000000000", i),
			WorkspaceID: "w7", Status: "active", CreatedAt: now})
	}
	c.clients.Next = "cursor"
	for i := range keysPage {
		c.keys.Items = append(c.keys.Items, adminapi.KeyInfo{WorkspaceID: "w7", LastUsedAt: &now, Listed: clientkey.Listed{
			Kid: fmt.Sprintf("k%08d", i), ClientID: "c1", Enc: "A256GCM", RequireFresh: true, Status: clientkey.Active, CreatedAt: now}})
	}
	c.keys.Next = "cursor"
	return c
}

func (c *cannedAPI) Whoami(context.Context) (adminapi.Person, error) {
	return adminapi.Person{Name: "alice@example.org", Role: "operator"}, nil
}
func (c *cannedAPI) ListClients(context.Context, adminapi.ClientQuery) (adminapi.Page[adminapi.Client], error) {
	return c.clients, nil
}
func (c *cannedAPI) GetClient(_ context.Context, id string) (adminapi.Client, error) {
	return adminapi.Client{ClientID: id, WorkspaceID: "w7", Status: "active"}, nil
}
func (c *cannedAPI) ListKeys(context.Context, adminapi.KeyQuery) (adminapi.Page[adminapi.KeyInfo], error) {
	return c.keys, nil
}
func (c *cannedAPI) ListGrants(context.Context, adminapi.GrantQuery) (adminapi.Page[adminapi.Grant], error) {
	return adminapi.Page[adminapi.Grant]{}, nil
}
func (c *cannedAPI) ListBackends(context.Context, adminapi.PageQuery) (adminapi.Page[adminapi.Backend], error) {
	return adminapi.Page[adminapi.Backend]{}, nil
}
func (c *cannedAPI) SearchAudit(context.Context, adminapi.AuditQuery) (adminapi.Page[json.RawMessage], error) {
	return adminapi.Page[json.RawMessage]{}, nil
}

// BenchmarkPages renders a page of 50 clients and a client's page with a
// page of 100 keys, and reports the 95th percentile.
func BenchmarkPages(b *testing.B) {
	srv := New(newCannedAPI(), "t", nil)
	_, cookie := signInDirect(b, srv)
	for _, path := range []string{"/clients", "/clients/c1"} {
		b.Run(path, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				req.AddCookie(cookie)
				rec := httptest.NewRecorder()
				start := time.Now()
				srv.ServeHTTP(rec, req)
				took = append(took, time.Since(start))
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d", path, rec.Code)
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}

// signInDirect signs in to srv with its token "t" and returns the session
// cookie.
func signInDirect(tb testing.TB, srv *Server) (*httptest.ResponseRecorder, *http.Cookie) {
	tb.Helper()
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/login?token=t", nil))
	cs := rec.Result().Cookies()
	if len(cs) != 1 {
		tb.Fatalf("sign in: %d %v", rec.Code, cs)
	}
	return rec, cs[0]
}
