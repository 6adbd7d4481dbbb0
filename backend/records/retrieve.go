package records

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/fhir"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// auditRetrieve records a retrieval of the record cc in the caller's
// trail (the workspace read: for a sharing grant, the owner's) before the
// answer: audit.Success when the document is about to be sent, audit.Denied
// when the workspace has no such record. An identifier that is not a care
// context id's syntax is left out of the record.
func (h *Handler) auditRetrieve(ctx context.Context, e audit.Event, cc string, o audit.Outcome) error {
	e.At, e.Action, e.Outcome = h.now(), audit.RecordRetrieve, o
	if contract.IsUUID(cc) {
		e.Entity = audit.Entity{Kind: audit.EntityCareContext, ID: cc}
	}
	_, err := h.cfg.Audit.AppendAudit(ctx, e)
	return err
}

func (h *Handler) serveRetrieve(w http.ResponseWriter, r *http.Request) error {
	caller, _ := web.CallerFrom(r.Context())
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil || len(q["identifier"]) != 1 || q.Get("identifier") == "" {
		return web.BadRequest("the query parameter identifier (a care_context_id) is required once")
	}
	cc := q.Get("identifier")
	rec, err := h.cfg.Store.GetRecord(r.Context(), caller.WorkspaceID, cc)
	if errors.Is(err, store.ErrNotFound) {
		if aerr := h.auditRetrieve(r.Context(), web.AuditEvent(r), cc, audit.Denied); aerr != nil {
			return aerr
		}
	}
	if err != nil {
		return err
	}
	resources, err := h.cfg.Store.ListRecordResources(r.Context(), rec.ID)
	if err != nil {
		return err
	}
	doc, err := fhir.Document(rec, resources)
	if err != nil {
		return err
	}
	// No unaudited access: the answer waits for its record.
	if err := h.auditRetrieve(r.Context(), web.AuditEvent(r), cc, audit.Success); err != nil {
		return err
	}
	web.WriteJSONBytes(w, http.StatusOK, doc)
	return nil
}
