package records

import (
	"errors"
	"io"
	"mime"
	"net/http"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/fhir"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// MaxResourcesBody caps a parser's submission.
const MaxResourcesBody = 16 << 20

// ResourcesResponse is the answer to a parser's submission.
type ResourcesResponse struct {
	CareContextID string             `json:"care_context_id"`
	Status        store.RecordStatus `json:"status"`
	Version       int64              `json:"version"`
	// ResourceIDs are the ids given to the submitted resources, in order.
	ResourceIDs []string `json:"resource_ids"`
}

// errAliasTaken answers a submission racing another that gave the record
// one of its aliases first.
var errAliasTaken = problem.New(http.StatusConflict, problem.CodeConflict,
	"a resource of the submission has the identity (fullUrl or Type/id) of a resource the record already has")

func (h *Handler) serveAddResources(w http.ResponseWriter, r *http.Request) error {
	data, err := readResources(w, r)
	if err != nil {
		return err
	}
	cc := r.PathValue("care_context_id")
	// References may name the resources of earlier submissions by their
	// aliases. Aliases are only ever added, and are unique per record, so
	// a submission racing this one can at most make the store refuse ours.
	known, err := h.cfg.Store.RecordAliases(r.Context(), cc)
	if err != nil {
		return err
	}
	resources, err := fhir.Ingest(data, known)
	if fe := (*fhir.Error)(nil); errors.As(err, &fe) {
		if fe.Conflict {
			return problem.New(http.StatusConflict, problem.CodeConflict, fe.Error())
		}
		return problem.New(http.StatusBadRequest, problem.CodeInvalidResources, fe.Error())
	}
	if err != nil {
		return err
	}
	// The parser acts for no client; the store puts the record in its
	// workspace's trail.
	now := h.now()
	e := web.AuditEvent(r)
	e.At, e.Action, e.Outcome = now, audit.ResourcesSubmit, audit.Success
	if contract.IsUUID(cc) {
		e.Entity = audit.Entity{Kind: audit.EntityCareContext, ID: cc}
	}
	rec, err := h.cfg.Store.AddRecordResources(r.Context(), cc, resources, now, e)
	if errors.Is(err, store.ErrConflict) {
		return errAliasTaken
	}
	if err != nil {
		return err
	}
	ids := make([]string, len(resources))
	for i, res := range resources {
		ids[i] = res.ID
	}
	telemetry.Logger(r.Context(), h.cfg.Log).Info("parser results stored", zap.String("document_id", rec.ID), zap.Int("resources", len(ids)),
		zap.Int64("version", rec.Version))
	web.WriteJSON(w, http.StatusOK, ResourcesResponse{CareContextID: rec.CareContextID, Status: rec.Status, Version: rec.Version, ResourceIDs: ids})
	return nil
}

// readResources returns the body of a parser's submission: JSON or FHIR
// JSON, at most MaxResourcesBody bytes.
func readResources(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/json" && mt != "application/fhir+json" {
		return nil, problem.New(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMedia,
			"Content-Type must be application/json or application/fhir+json")
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxResourcesBody))
	if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
		return nil, web.TooLarge("parser results are limited to 16 MiB")
	}
	if err != nil {
		return nil, web.BadRequest("the body could not be read")
	}
	return data, nil
}
