package admin_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// TestClientLimits: an operator sets a client's limits through the Admin
// API and clears them, each change a record naming her and a change of the
// key plane naming the client; an auditor reads them and is refused the
// change; bad limits and unknown clients are problems that change nothing.
func TestClientLimits(t *testing.T) {
	t.Parallel()
	url, callers, st := admin.StartAPI(t)
	op := dial(t, url, callers["operator"])
	aud := dial(t, url, callers["auditor"])
	ctx := t.Context()
	c, err := op.CreateClient(ctx, adminapi.CreateClientRequest{WorkspaceID: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	want := contract.Limits{Rates: map[contract.RouteClass]contract.Rate{contract.ClassWrites: {PerSecond: 100, Burst: 20}}, UploadBytesPerDay: 10 << 20}
	if got, err := op.SetClientLimits(ctx, c.ClientID, want); err != nil || !reflect.DeepEqual(got.Limits, want) {
		t.Fatalf("SetClientLimits: %+v, %v", got, err)
	}
	if got, err := aud.ClientLimits(ctx, c.ClientID); err != nil || got.ClientID != c.ClientID || !reflect.DeepEqual(got.Limits, want) {
		t.Fatalf("ClientLimits as the auditor: %+v, %v", got, err)
	}
	refusals := []struct {
		name   string
		call   func() error
		status int
		code   string
	}{
		{"an auditor's change", func() error { _, err := aud.SetClientLimits(ctx, c.ClientID, contract.Limits{}); return err }, 403, "forbidden"},
		{"an auditor's clearing", func() error { _, err := aud.ClearClientLimits(ctx, c.ClientID); return err }, 403, "forbidden"},
		{"an unknown class", func() error {
			_, err := op.SetClientLimits(ctx, c.ClientID, contract.Limits{Rates: map[contract.RouteClass]contract.Rate{"deletes": {PerSecond: 1, Burst: 1}}})
			return err
		}, 400, "invalid_request"},
		{"a rate without a burst", func() error {
			_, err := op.SetClientLimits(ctx, c.ClientID, contract.Limits{Rates: map[contract.RouteClass]contract.Rate{contract.ClassReads: {PerSecond: 5}}})
			return err
		}, 400, "invalid_request"},
		{"an unknown client", func() error { _, err := op.SetClientLimits(ctx, "nobody", want); return err }, 404, "not_found"},
		{"an unknown client's limits", func() error { _, err := aud.ClientLimits(ctx, "nobody"); return err }, 404, "not_found"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			var p *problem.Problem
			if err := tt.call(); !errors.As(err, &p) || p.Status != tt.status || p.Code != tt.code {
				t.Fatalf("got %v, want %d %s", err, tt.status, tt.code)
			}
		})
	}
	if got, _, _ := st.ClientLimits(ctx, c.ClientID); !reflect.DeepEqual(got, want) {
		t.Fatalf("the refusals changed the limits: %+v", got)
	}
	if got, err := op.ClearClientLimits(ctx, c.ClientID); err != nil || len(got.Limits.Rates) != 0 {
		t.Fatalf("ClearClientLimits: %+v, %v", got, err)
	}
	if _, ok, _ := st.ClientLimits(ctx, c.ClientID); ok {
		t.Fatal("the limits are still there")
	}
	rs, err := st.ListAudit(ctx, store.AuditFilter{Workspace: "w1", Agent: "alice@example.org", Entity: c.ClientID})
	if err != nil || len(rs) != 3 || rs[1].Action != audit.ClientLimitsSet || rs[2].Action != audit.ClientLimitsClear {
		t.Fatalf("w1's records by alice: %+v, %v", rs, err)
	}
	// Both records carry the limits before and after: the clearing, those
	// it removed.
	set := audit.Change{Field: audit.ChangeLimits, After: store.LimitsJSON(want)}
	cleared := audit.Change{Field: audit.ChangeLimits, Before: store.LimitsJSON(want)}
	if !reflect.DeepEqual(rs[1].Changes, []audit.Change{set}) || !reflect.DeepEqual(rs[2].Changes, []audit.Change{cleared}) {
		t.Fatalf("the records' changes: %+v, %+v", rs[1].Changes, rs[2].Changes)
	}
}
