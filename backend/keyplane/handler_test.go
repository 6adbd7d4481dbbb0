package keyplane

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
)

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// plane returns a key plane over a new SQLite store, its hub running, and
// the store.
// testFilterPage is the filter's page in the tests: small, so that a test
// reads several pages without adding thousands of keys.
const testFilterPage = 50

func plane(t *testing.T) (*httptest.Server, store.Store) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	hub := NewHub(st, time.Minute, 20*time.Millisecond, zap.NewNop())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { hub.Run(ctx); close(done) }()
	h, err := New(st, hub, zap.NewNop(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	h.filterPage = testFilterPage
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+contract.PathKey, h.Key)
	mux.HandleFunc("GET "+contract.PathKeyChanges, h.Changes)
	mux.HandleFunc("GET "+contract.PathKeyFilter, h.Filter)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { srv.Close(); cancel(); <-done })
	return srv, st
}

func addKey(t *testing.T, st store.Store, kid string) store.ClientKey {
	t.Helper()
	k, err := st.AddClientKey(t.Context(), store.ClientKey{Key: clientkey.Key{Kid: kid, ClientID: "c1", Secret: "0123456789abcdef", Enc: "A128CBC-HS256", Status: clientkey.Active, CreatedAt: t0}},
		audit.Event{At: t0, Action: audit.KeyAdd, Outcome: audit.Success, Entity: audit.Entity{Kind: audit.EntityKey, ID: kid}})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func get(t *testing.T, url string, out any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}

func TestKey(t *testing.T) {
	srv, st := plane(t)
	addKey(t, st, "k1")
	tests := []struct {
		name, kid string
		status    int
	}{
		{"known", "k1", http.StatusOK},
		{"unknown", "k2", http.StatusNotFound},
		{"not a kid", "k%20x", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var k contract.ClientKey
			if got := get(t, srv.URL+"/internal/v1/keys/"+tt.kid, &k); got != tt.status {
				t.Fatalf("status %d, want %d", got, tt.status)
			}
			if tt.status == http.StatusOK && (k.Kid != "k1" || k.Secret != "0123456789abcdef" || k.Status != clientkey.Active || k.Seq != 1) {
				t.Fatalf("key %+v", k)
			}
		})
	}
}

func TestChanges(t *testing.T) {
	srv, st := plane(t)
	addKey(t, st, "k1")
	addKey(t, st, "k2")
	tests := []struct {
		name   string
		query  string
		status int
		want   []clientkey.Change
	}{
		{"all", "", http.StatusOK, []clientkey.Change{{Kid: "k1", Seq: 1}, {Kid: "k2", Seq: 2}}},
		{"after 1", "?after=1", http.StatusOK, []clientkey.Change{{Kid: "k2", Seq: 2}}},
		{"none yet", "?after=2", http.StatusOK, []clientkey.Change{}},
		{"negative", "?after=-1", http.StatusBadRequest, nil},
		{"not a number", "?after=x", http.StatusBadRequest, nil},
		{"wait too long", "?wait=31s", http.StatusBadRequest, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got contract.KeyChanges
			if status := get(t, srv.URL+contract.PathKeyChanges+tt.query, &got); status != tt.status {
				t.Fatalf("status %d, want %d", status, tt.status)
			}
			if tt.status != http.StatusOK {
				return
			}
			if got.Last != 2 || len(got.Changes) != len(tt.want) {
				t.Fatalf("got %+v, want %v", got, tt.want)
			}
			for i := range tt.want {
				if got.Changes[i] != tt.want[i] {
					t.Fatalf("got %+v, want %v", got, tt.want)
				}
			}
		})
	}
}

// TestChangesWait holds a request for changes until a key changes: it
// answers with that change, well before its wait ends.
func TestChangesWait(t *testing.T) {
	srv, st := plane(t)
	addKey(t, st, "k1")
	answered := make(chan contract.KeyChanges)
	go func() {
		var got contract.KeyChanges
		get(t, srv.URL+contract.PathKeyChanges+"?after=1&wait=30s", &got)
		answered <- got
	}()
	time.Sleep(100 * time.Millisecond) // the request waits
	addKey(t, st, "k2")
	select {
	case got := <-answered:
		if got.Last != 2 || len(got.Changes) != 1 || got.Changes[0].Kid != "k2" {
			t.Fatalf("answered %+v", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the waiting request did not see the change")
	}
}
