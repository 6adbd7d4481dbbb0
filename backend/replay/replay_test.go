package replay

import (
	"context"
	"errors"
	"maps"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/internal/contract"
)

// down is a store whose database does not answer.
type down struct{ store.Replays }

func (down) NoteRequest(context.Context, string, string, time.Time, time.Time) error {
	return errors.New("connection refused")
}

func TestCheck(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	g, err := New(st, zap.NewNop(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	broken, err := New(down{}, zap.NewNop(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for _, guard := range []*Guard{g, broken} {
		if n := testutil.CollectAndCount(guard.results); n != 3 {
			t.Fatalf("before any request, %d results are counted, want new, replayed and failed", n)
		}
	}
	expires := time.Now().Add(5 * time.Minute).Unix()
	for _, tt := range []struct {
		name     string
		g        *Guard
		kid, jti string
		want     string // the problem's code, "" for none
		counted  string // the result counted, "" for none
	}{
		{"no jti", g, "k1", "", "", ""},
		{"a new jti", g, "k1", "a-request-id-0001", "", "new"},
		{"the same jti", g, "k1", "a-request-id-0001", "replayed_request", "replayed"},
		{"the same jti under another kid", g, "k2", "a-request-id-0001", "", "new"},
		{"the database down", broken, "k1", "a-request-id-0002", "not_ready", "failed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := counts(tt.g)
			r := httptest.NewRequest("POST", "/", nil)
			r.Header.Set(contract.HeaderKeyID, tt.kid)
			if tt.jti != "" {
				r.Header.Set(contract.HeaderJTI, tt.jti)
				r.Header.Set(contract.HeaderJTIExpires, strconv.FormatInt(expires, 10))
			}
			p := tt.g.Check(r)
			switch {
			case tt.want == "" && p != nil:
				t.Fatalf("Check = %v", p)
			case tt.want != "" && (p == nil || p.Code != tt.want):
				t.Fatalf("Check = %v, want %s", p, tt.want)
			}
			after := counts(tt.g)
			if tt.counted != "" {
				before[tt.counted]++
			}
			if !maps.Equal(after, before) {
				t.Fatalf("counted %v, want %v", after, before)
			}
		})
	}
}

// counts reads g's count of each result.
func counts(g *Guard) map[string]float64 {
	c := map[string]float64{}
	for _, result := range []string{"new", "replayed", "failed"} {
		c[result] = testutil.ToFloat64(g.results.WithLabelValues(result))
	}
	return c
}
