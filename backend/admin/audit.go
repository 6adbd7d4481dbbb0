package admin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// ContentTypeNDJSON is the media type of an export: FHIR resources, one
// JSON object a line.
const ContentTypeNDJSON = "application/fhir+ndjson"

// Option sets what New does not take: the services of some routes.
type Option func(*Service)

// WithTrail gives the service the audit trail's search, export and
// verification (the backend's with its own checkpoints and retention;
// hdc's direct mode's with its flags').
func WithTrail(t *trail.Service) Option { return func(s *Service) { s.trail = t } }

// errNoTrail answers the audit routes of a service made without WithTrail.
var errNoTrail = errors.New("admin: the service has no audit trail (WithTrail)")

// SearchAudit returns a page of the audit records q selects, each as its
// canonical form with its link ("hash"), trails in workspace order and
// each oldest first; the search is recorded, naming the person.
func (s *Service) SearchAudit(ctx context.Context, q trail.Query) (Page[json.RawMessage], error) {
	if s.trail == nil {
		return Page[json.RawMessage]{}, errNoTrail
	}
	p, err := s.trail.Search(ctx, q)
	return Page[json.RawMessage]{Items: p.Items, Next: p.Next}, err
}

// ExportAudit writes the audit records q selects to w as FHIR AuditEvent
// NDJSON; the export is recorded, naming the person, before anything is
// written.
func (s *Service) ExportAudit(ctx context.Context, q trail.Query, w io.Writer) error {
	if s.trail == nil {
		return errNoTrail
	}
	return s.trail.Export(ctx, q, w)
}

// VerifyAudit verifies every audit trail against the newest checkpoint and
// the retention, and reports each one's status; the verification is
// recorded, naming the person.
func (s *Service) VerifyAudit(ctx context.Context) (trail.Report, error) {
	if s.trail == nil {
		return trail.Report{}, errNoTrail
	}
	return s.trail.Verify(ctx)
}

func (h *Handler) searchAudit(w http.ResponseWriter, r *http.Request) error {
	return listedBy(w, r, trail.ParseQuery, h.svc.SearchAudit)
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
	hd.Set("Content-Type", ContentTypeNDJSON)
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	out := &counting{w: w}
	err = h.svc.ExportAudit(r.Context(), q, out)
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
	if _, err := query(r.URL.Query()); err != nil {
		return err
	}
	rep, err := h.svc.VerifyAudit(r.Context())
	if p := trail.AsNoCheckpoint(err); p != nil {
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
	Trails []trail.Status `json:"trails"`
}
