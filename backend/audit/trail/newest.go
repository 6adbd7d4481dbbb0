package trail

import (
	"context"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// Newest first (Query.Newest): every trail's records together, by time,
// then workspace, then seq, the newest first. The store merges the trails
// (store.Audit.ListAuditNewest: one statement a batch, reading each
// trail's newest records on the index of its times), so that a page's cost
// grows with the number of trails, not with their length.

// scanNewest calls fn with each record w selects, newest first across its
// trails (or in its one trail), a batch at a time, and reports whether it
// read them all (false when w was full first). A record that does not
// verify ends the reading with its break, after the records before it.
func (s *Service) scanNewest(ctx context.Context, w *walk, fn func(audit.Record) error) (bool, error) {
	q := w.q
	f := store.AuditFilter{Workspace: q.Workspace, Every: !q.Scoped, Since: q.Since, Until: w.until(), Entity: q.Entity, Agent: q.Agent}
	if w.from.Seq > 0 { // a cursor: the record the page before ended at
		f.Before = store.AuditPlace{At: time.UnixMicro(w.from.At).UTC(), Workspace: w.from.Workspace, Seq: w.from.Seq}
	}
	for {
		f.Limit = w.batch()
		rs, err := s.st.ListAuditNewest(ctx, f)
		for _, r := range rs {
			if err := w.take(r, fn); err != nil || w.full() {
				return false, err
			}
		}
		if err != nil || len(rs) < f.Limit {
			return err == nil, err
		}
		f.Before = store.PlaceOf(rs[len(rs)-1])
	}
}
