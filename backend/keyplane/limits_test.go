package keyplane

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/internal/contract"
)

// fakeLimits holds overrides in memory, sorted by client id.
type fakeLimits []contract.ClientLimits

func (f fakeLimits) ClientLimits(_ context.Context, id string) (contract.Limits, bool, error) {
	for _, c := range f {
		if c.ClientID == id {
			return c.Limits, true, nil
		}
	}
	return contract.Limits{}, false, nil
}

func (f fakeLimits) ListClientLimits(_ context.Context, after string, limit int) ([]contract.ClientLimits, error) {
	var out []contract.ClientLimits
	for _, c := range f {
		if c.ClientID > after && len(out) < limit {
			out = append(out, c)
		}
	}
	return out, nil
}

func limitsServer(t *testing.T) *httptest.Server {
	t.Helper()
	f := fakeLimits{
		{ClientID: "a", Limits: contract.Limits{Rates: map[contract.RouteClass]contract.Rate{contract.ClassWrites: {PerSecond: 5, Burst: 10}}}},
		{ClientID: "b", Limits: contract.Limits{UploadBytesPerDay: 1 << 20}},
		{ClientID: "c", Limits: contract.Limits{}},
	}
	h := NewLimits(f, zap.NewNop())
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+contract.PathClientLimits, h.List)
	mux.HandleFunc("GET "+contract.PathClientLimits+"/{client_id}", h.One)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestClientLimitsPages(t *testing.T) {
	t.Parallel()
	srv := limitsServer(t)
	var ids []string
	after := ""
	for range 5 {
		var page LimitsPage
		if code := get(t, srv.URL+contract.PathClientLimits+"?limit=2&after="+after, &page); code != http.StatusOK {
			t.Fatalf("status %d", code)
		}
		for _, c := range page.Limits {
			ids = append(ids, c.ClientID)
		}
		if page.Next == "" {
			break
		}
		after = page.Next
	}
	if !slices.Equal(ids, []string{"a", "b", "c"}) {
		t.Fatalf("pages gave %v, want a b c", ids)
	}
}

func TestClientLimitsOne(t *testing.T) {
	t.Parallel()
	srv := limitsServer(t)
	tests := []struct {
		name, path string
		want       int
		writes     float64
	}{
		{"override", "/a", http.StatusOK, 5},
		{"quota only", "/b", http.StatusOK, 0},
		{"none", "/z", http.StatusNotFound, 0},
		{"bad limit", "?limit=0", http.StatusBadRequest, 0},
		{"limit too large", "?limit=10001", http.StatusBadRequest, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var cl contract.ClientLimits
			code := get(t, srv.URL+contract.PathClientLimits+tt.path, &cl)
			if code != tt.want {
				t.Fatalf("status %d, want %d", code, tt.want)
			}
			if code == http.StatusOK && !strings.HasPrefix(tt.path, "?") {
				if cl.ClientID != strings.TrimPrefix(tt.path, "/") || cl.Limits.Rates[contract.ClassWrites].PerSecond != tt.writes {
					t.Fatalf("answer %+v", cl)
				}
			}
		})
	}
}
