package backend

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestFleet: the server writes its heartbeat as it starts, and an edge's
// report over the hop names the edge by its certificate, counts its lag
// and raises the key's last use, which the store then returns.
func TestFleet(t *testing.T) {
	t.Parallel()
	h := start(t, withHop(t))
	ctx := t.Context()
	key, err := h.srv.Store().AddClientKey(ctx, store.ClientKey{Key: clientkey.Key{Kid: "k-fleet", ClientID: "c1", Secret: "0123456789abcdef",
		Enc: "A128CBC-HS256", CreatedAt: time.Now()}}, audit.Event{At: time.Now(), Action: audit.KeyAdd, Outcome: audit.Success,
		Entity: audit.Entity{Kind: audit.EntityKey, ID: "k-fleet"}})
	if err != nil {
		t.Fatal(err)
	}
	used := time.Now().Add(-time.Second).UTC().Truncate(time.Microsecond)
	body := fmt.Sprintf(`{"instance":"0f8fad5b-d9cb-469f-a165-70867728950e","applied_seq":0,"uses":[{"kid":"k-fleet","last_used":%q}]}`,
		used.Format(time.RFC3339Nano))
	if res := h.do("POST", h.internal+contract.PathEdgeReport, strings.NewReader(body), "Content-Type", "application/json"); res.StatusCode != http.StatusNoContent {
		t.Fatalf("the report: %d %s", res.StatusCode, res.body)
	}
	if k, err := h.srv.Store().ClientKey(ctx, "k-fleet"); err != nil || !k.LastUsedAt.Equal(used) || k.Seq != key.Seq {
		t.Fatalf("the key after the report: last used %v, seq %d (%v); want %v, %d", k.LastUsedAt, k.Seq, err, used, key.Seq)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(filepath.Dir(h.cfg.HopCA), pki.CertFile(pki.Edge)), filepath.Join(filepath.Dir(h.cfg.HopCA), pki.KeyFile(pki.Edge)))
	if err != nil {
		t.Fatal(err)
	}
	edges, err := h.srv.Fleet().Edges(ctx)
	if err != nil || len(edges) != 1 {
		t.Fatalf("Edges = %+v, %v", edges, err)
	}
	if e := edges[0]; e.Name != "hdc-edge" || e.Serial != cert.Leaf.SerialNumber.Text(16) || e.Lag != key.Seq || !e.Current || e.Source != "127.0.0.1" {
		t.Fatalf("the edge: %+v", e)
	}
	testkit.Eventually(t, 10*time.Second, "the backend's heartbeat", func() bool {
		backends, err := h.srv.Fleet().Backends(ctx)
		return err == nil && len(backends) == 1 && backends[0].Current && "https://"+backends[0].Address == h.internal
	})
}
