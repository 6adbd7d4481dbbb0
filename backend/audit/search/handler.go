// Package search serves a workspace's audit trail as FHIR R4:
// GET /health/api/v1/fhir/AuditEvent answers a searchset Bundle of
// AuditEvent resources (package fhirview maps them), a page at a time: its
// parameters are parsed into a store.AuditFilter and its pages linked in
// params.go.
//
// The trail served is the one of the token's workspace, which holds every
// access made in it, those of other workspaces' clients through sharing
// grants included. A client logged in through a sharing grant is refused
// (403 forbidden): the grant opens the owner's records to it, not the
// owner's trail, which names the owner's clients and their addresses.
package search

import (
	"net/http"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit/fhirview"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Handler serves the AuditEvent search.
type Handler struct {
	store  store.Audit
	now    func() time.Time
	search http.Handler
}

// New returns a Handler over the trail in st.
func New(st store.Audit, log *zap.Logger) *Handler {
	h := &Handler{store: st, now: time.Now}
	problems := &web.Problems{Log: log}
	h.search = problems.Handler("audit_events", h.serveSearch)
	return h
}

// Search serves GET /health/api/v1/fhir/AuditEvent.
func (h *Handler) Search(w http.ResponseWriter, r *http.Request) { h.search.ServeHTTP(w, r) }

// ErrSharedTrail answers a client logged in through a sharing grant.
var ErrSharedTrail = problem.New(http.StatusForbidden, problem.CodeForbidden,
	"a sharing login cannot read the audit trail of the workspace it was granted: log in to your own workspace to read its trail")

func (h *Handler) serveSearch(w http.ResponseWriter, r *http.Request) error {
	caller, _ := web.CallerFrom(r.Context())
	if caller.GrantID != "" {
		return ErrSharedTrail
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return web.BadRequest("the query string is not valid form encoding")
	}
	s, err := Parse(q)
	if err != nil {
		return web.BadRequest(err.Error())
	}
	f := s.Filter
	f.Workspace = caller.WorkspaceID
	f.Limit++ // one more tells whether there is a next page
	recs, err := h.store.ListAudit(r.Context(), f)
	if err != nil {
		return err
	}
	more := len(recs) > s.Filter.Limit
	if more {
		recs = recs[:s.Filter.Limit]
	}
	var last int64
	if len(recs) > 0 {
		last = recs[len(recs)-1].Seq
	}
	self, next := s.Links(last, more)
	body, err := fhirview.AuditSearchset(fhirview.AuditPage{Records: recs, Self: self, Next: next, At: h.now()})
	if err != nil {
		return err
	}
	web.WriteJSONBytes(w, http.StatusOK, body)
	return nil
}
