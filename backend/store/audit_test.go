package store

import (
	"errors"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
)

// TestDecodeAudit holds that a listed row whose record is not what the
// query selected, or whose columns are not its record's, ends the list: an
// index column changed behind the store's back cannot show a record where
// it does not belong, and is named.
func TestDecodeAudit(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	const client, care = "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01", "9e8d7c6b-5a49-4382-9716-0f1e2d3c4b03"
	var (
		rows []AuditRow
		last audit.Link
	)
	for i := range 3 {
		r, err := audit.Next(last, audit.Event{
			At: t0.Add(time.Duration(i) * time.Minute), Action: audit.RecordRetrieve, Outcome: audit.Success,
			Workspace: "w1", Client: client, Entity: audit.Entity{Kind: audit.EntityCareContext, ID: care},
		})
		if err != nil {
			t.Fatal(err)
		}
		rows, last = append(rows, AuditRow{Workspace: "w1", Seq: r.Seq, Body: r.Canonical(), At: r.At, Client: r.Client, Entity: r.Entity.ID}), r.Link()
	}
	moved := rows[1]
	moved.At = time.Unix(0, 0)
	otherClient := rows[2]
	otherClient.Client = "6b2dab63-4c8f-4e1f-8054-3f9f2d7c8b02"
	otherWorkspace := rows[1]
	otherWorkspace.Workspace = "w2"
	tests := []struct {
		name string
		f    AuditFilter
		rows []AuditRow
		ok   int // records decoded before the break, or all of them
	}{
		{"selected", AuditFilter{Workspace: "w1", Agent: client, Entity: care, Since: t0, Until: t0.Add(time.Hour)}, rows, 3},
		{"another workspace", AuditFilter{Workspace: "w2"}, rows, 0},
		{"another entity", AuditFilter{Workspace: "w1", Entity: "0f9e8d7c-6b5a-4493-8827-1a2b3c4d5e04"}, rows, 0},
		{"another agent", AuditFilter{Workspace: "w1", Agent: "6b2dab63-4c8f-4e1f-8054-3f9f2d7c8b02"}, rows, 0},
		{"too late", AuditFilter{Workspace: "w1", Until: t0.Add(time.Minute)}, rows, 1},
		{"too early", AuditFilter{Workspace: "w1", Since: t0.Add(time.Minute)}, rows, 0},
		{"before the cursor", AuditFilter{Workspace: "w1", After: 1}, rows, 0},
		{"another row's record", AuditFilter{Workspace: "w1"}, []AuditRow{rows[0], {Workspace: "w1", Seq: 2, Body: rows[2].Body, At: rows[1].At, Client: client, Entity: care}}, 1},
		{"a row's workspace column changed", AuditFilter{Every: true}, []AuditRow{rows[0], otherWorkspace, rows[2]}, 1},
		{"every chain", AuditFilter{Every: true}, rows, 3},
		{"newest first, after the last", AuditFilter{Every: true, Before: PlaceOf(audit.Record{Event: audit.Event{At: t0.Add(2 * time.Minute), Workspace: "w1"}, Seq: 3})},
			[]AuditRow{rows[1], rows[0]}, 2},
		{"newest first, at the place", AuditFilter{Every: true, Before: AuditPlace{At: t0.Add(time.Minute), Workspace: "w1", Seq: 2}}, []AuditRow{rows[1], rows[0]}, 0},
		{"newest first, a later workspace at the time", AuditFilter{Every: true, Before: AuditPlace{At: t0.Add(time.Minute), Workspace: "w0", Seq: 9}}, []AuditRow{rows[1]}, 1},
		{"newest first, an earlier workspace at the time", AuditFilter{Every: true, Before: AuditPlace{At: t0.Add(time.Minute), Workspace: "w2", Seq: 1}}, []AuditRow{rows[1]}, 0},
		{"a row's time column moved", AuditFilter{Workspace: "w1"}, []AuditRow{rows[0], moved, rows[2]}, 1},
		{"a row's client column changed", AuditFilter{Workspace: "w1"}, []AuditRow{rows[0], rows[1], otherClient}, 2},
		{"not a record", AuditFilter{Workspace: "w1"}, []AuditRow{rows[0], rows[1], {Seq: 3, Body: []byte("{}")}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeAudit(tt.f, tt.rows)
			if len(got) != tt.ok {
				t.Fatalf("%d records decoded, want %d (error %v)", len(got), tt.ok, err)
			}
			var b *audit.Break
			switch {
			case tt.ok == len(tt.rows) && err != nil:
				t.Fatalf("DecodeAudit() = %v, want nil", err)
			case tt.ok < len(tt.rows) && (!errors.As(err, &b) || b.Seq != tt.rows[tt.ok].Seq || b.Workspace != tt.rows[tt.ok].Workspace):
				t.Fatalf("DecodeAudit() = %v, want a break of %q at record %d", err, tt.rows[tt.ok].Workspace, tt.rows[tt.ok].Seq)
			}
		})
	}
}
