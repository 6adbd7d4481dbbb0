package trail

import (
	"context"
	"fmt"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// recordRead records that the person ctx carries read the trails q
// selects (action): in the one workspace's trail it read when that trail
// exists, else in the installation's, naming the workspace as the
// entity. No person, or a person of hdc's direct mode, records nothing
// (see the package doc).
func (s *Service) recordRead(ctx context.Context, action audit.Action, q Query) error {
	p, err := audit.PersonFrom(ctx)
	if err != nil || p.Direct {
		return nil
	}
	e := audit.Event{At: s.now(), Action: action, Outcome: audit.Success, Person: p}
	if q.Scoped && q.Workspace != "" {
		e.Entity = audit.Entity{Kind: audit.EntityWorkspace, ID: q.Workspace}
		rs, err := s.st.ListAudit(ctx, store.AuditFilter{Workspace: q.Workspace, Limit: 1})
		if err != nil {
			return err
		}
		if len(rs) > 0 {
			e.Workspace = q.Workspace
		}
	}
	if _, err := s.st.AppendAudit(ctx, e); err != nil {
		return fmt.Errorf("recording the read of the audit trail, without which nothing is read: %w", err)
	}
	return nil
}
