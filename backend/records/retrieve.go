package records

import (
	"net/http"
	"net/url"

	"github.com/health-data-connect/hdc/backend/fhir"
	"github.com/health-data-connect/hdc/backend/internal/web"
)

func (h *Handler) serveRetrieve(w http.ResponseWriter, r *http.Request) error {
	caller, _ := web.CallerFrom(r.Context())
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil || len(q["identifier"]) != 1 || q.Get("identifier") == "" {
		return web.BadRequest("the query parameter identifier (a care_context_id) is required once")
	}
	rec, err := h.cfg.Store.GetRecord(r.Context(), caller.WorkspaceID, q.Get("identifier"))
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
	web.WriteJSONBytes(w, http.StatusOK, doc)
	return nil
}
