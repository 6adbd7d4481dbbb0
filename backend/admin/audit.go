package admin

import (
	"context"
	"errors"
	"io"
	"net/http"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// Option sets what New does not take: the services of some routes.
type Option func(*Service)

// WithTrail gives the service the audit trail's search, export and
// verification (the backend's with its own checkpoints and retention;
// hdc's direct mode's with its flags').
func WithTrail(t *trail.Service) Option { return func(s *Service) { s.trail = t } }

// errNoTrail answers the audit routes of a service made without WithTrail.
var errNoTrail = errors.New("admin: the service has no audit trail (WithTrail)")

// reportOut is r as the API shows it.
func reportOut(r trail.Report) adminapi.AuditReport {
	return adminapi.AuditReport{Trails: mapped(r.Trails, trailStatusOut), Checkpoint: checkpointOut(r.Checkpoint)}
}

// trailStatusOut is st as the API shows it.
func trailStatusOut(st trail.Status) adminapi.TrailStatus {
	return adminapi.TrailStatus{Workspace: st.Workspace, First: st.First, Last: st.Last, Status: st.Status, Seq: st.Seq, Reason: st.Reason}
}

// SearchAudit returns a page of the audit records q selects, each as its
// canonical form with its link ("hash"), trails in workspace order and
// each oldest first, or with q.Newest every trail's records together,
// newest first; the search is recorded, naming the person.
func (s *Service) SearchAudit(ctx context.Context, q adminapi.AuditQuery) (adminapi.AuditPage, error) {
	tq, err := trail.ParseQuery(q.Values())
	if err != nil {
		return adminapi.AuditPage{}, err
	}
	return s.searchAudit(ctx, tq)
}

// searchAudit is SearchAudit of the trail's query.
func (s *Service) searchAudit(ctx context.Context, q trail.Query) (adminapi.AuditPage, error) {
	if s.trail == nil {
		return adminapi.AuditPage{}, errNoTrail
	}
	p, err := s.trail.Search(ctx, q)
	return adminapi.AuditPage{Items: p.Items, Next: p.Next}, err
}

// ExportAudit writes the audit records q selects to w as FHIR AuditEvent
// NDJSON; the export is recorded, naming the person, before anything is
// written.
func (s *Service) ExportAudit(ctx context.Context, q adminapi.AuditQuery, w io.Writer) error {
	tq, err := trail.ParseQuery(q.Values())
	if err != nil {
		return err
	}
	return s.exportAudit(ctx, tq, w)
}

// exportAudit is ExportAudit of the trail's query.
func (s *Service) exportAudit(ctx context.Context, q trail.Query, w io.Writer) error {
	if s.trail == nil {
		return errNoTrail
	}
	return s.trail.Export(ctx, q, w)
}

// VerifyAudit verifies every audit trail against the newest checkpoint and
// the retention, and reports each one's status; the verification is
// recorded, naming the person.
func (s *Service) VerifyAudit(ctx context.Context) (adminapi.AuditReport, error) {
	if s.trail == nil {
		return adminapi.AuditReport{}, errNoTrail
	}
	r, err := s.trail.Verify(ctx)
	return reportOut(r), err
}

func (h *Handler) searchAudit(w http.ResponseWriter, r *http.Request) error {
	return listedBy(w, r, trail.ParseQuery, h.svc.searchAudit)
}

// exportAudit streams the export. An error once the answer has begun
// cannot be a problem: the connection is broken off, so that the caller
// sees a truncated export fail.
func (h *Handler) exportAudit(w http.ResponseWriter, r *http.Request) error {
	q, err := trail.ParseQuery(r.URL.Query())
	if err != nil {
		return err
	}
	hd := w.Header()
	hd.Set("Content-Type", adminapi.ContentTypeNDJSON)
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	out := &counting{w: w}
	err = h.svc.exportAudit(r.Context(), q, out)
	if err != nil && out.n > 0 {
		telemetry.Logger(r.Context(), h.Log).Error("export broken off", zap.Error(err))
		panic(http.ErrAbortHandler)
	}
	return err
}

// counting is a writer that counts what passed to w.
type counting struct {
	w io.Writer
	n int64
}

func (c *counting) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// verifyAudit answers the report, or, when the checkpoints' bucket holds
// none yet, the problem no_checkpoint with the trails verified as its
// member "trails".
func (h *Handler) verifyAudit(w http.ResponseWriter, r *http.Request) error {
	if err := adminapi.CheckParams(r.URL.Query()); err != nil {
		return err
	}
	rep, err := h.svc.VerifyAudit(r.Context())
	if p := adminapi.AsNoCheckpoint(err); p != nil {
		return problem.WriteExtended(w, p, verifiedTrails{rep.Trails})
	}
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, rep)
	return nil
}

// verifiedTrails are the extension member of the problem no_checkpoint:
// the trails verified without a checkpoint.
type verifiedTrails struct {
	Trails []adminapi.TrailStatus `json:"trails"`
}
