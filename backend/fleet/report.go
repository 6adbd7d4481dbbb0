package fleet

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/strictjson"
)

// ParseReport reads and checks an edge's report (contract.EdgeReport): its
// instance id a UUID, its applied number not negative, at most
// contract.MaxEdgeReportUses uses, each of a valid kid, named once, with
// a time. Its errors are safe to show to the edge: they quote no kid.
func ParseReport(body []byte) (contract.EdgeReport, error) {
	var r contract.EdgeReport
	if err := strictjson.Unmarshal(body, &r); err != nil {
		return contract.EdgeReport{}, err
	}
	switch {
	case !contract.IsUUID(r.Instance):
		return contract.EdgeReport{}, errors.New("instance must be a UUID")
	case r.AppliedSeq < 0:
		return contract.EdgeReport{}, errors.New("applied_seq must not be negative")
	case len(r.Uses) > contract.MaxEdgeReportUses:
		return contract.EdgeReport{}, fmt.Errorf("a report carries at most %d uses", contract.MaxEdgeReportUses)
	}
	seen := make(map[string]struct{}, len(r.Uses))
	for i, u := range r.Uses {
		_, dup := seen[u.Kid]
		switch {
		case !clientkey.ValidKid(u.Kid):
			return contract.EdgeReport{}, fmt.Errorf("uses[%d]: kid must be 1 to 128 characters of A-Z a-z 0-9 . _ : -", i)
		case u.LastUsed.IsZero():
			return contract.EdgeReport{}, fmt.Errorf("uses[%d]: last_used is required", i)
		case dup:
			return contract.EdgeReport{}, fmt.Errorf("uses[%d]: the kid of an earlier use", i)
		}
		seen[u.Kid] = struct{}{}
	}
	return r, nil
}

// Handler takes the edges' reports.
type Handler struct {
	store  store.Fleet
	now    func() time.Time
	report http.Handler
}

// errOtherEdge answers a report that names the instance of an edge of
// another certificate's name.
var errOtherEdge = problem.New(http.StatusForbidden, problem.CodeForbidden,
	"the instance is an edge's of another certificate: an edge reports under its own instance id")

// NewHandler returns the Handler that records the reports in st.
func NewHandler(st store.Fleet, log *zap.Logger) *Handler {
	h := &Handler{store: st, now: time.Now}
	ps := &web.Problems{Log: log, Known: web.ErrorMap{{Err: store.ErrOtherEdge, Problem: errOtherEdge}}}
	h.report = ps.Handler("edge_report", h.serveReport)
	return h
}

// Report serves POST contract.PathEdgeReport: 204 once the report is
// recorded, a problem for a body that is not a report (400, 413, 415),
// and 403 for a report naming an instance that another certificate's
// name reported first, which changes nothing. The edge is named by its
// instance id and by the subject's common name and the serial number of
// its client certificate; an edge's instance of that name reporting from
// the address of another replaces it (store.Fleet.ReportEdge). A use
// later than now by the backend's clock counts as now.
func (h *Handler) Report(w http.ResponseWriter, r *http.Request) { h.report.ServeHTTP(w, r) }

func (h *Handler) serveReport(w http.ResponseWriter, r *http.Request) error {
	body, p := web.ReadJSONUpTo(w, r, contract.MaxEdgeReport)
	if p != nil {
		return p
	}
	rep, err := ParseReport(body)
	if err != nil {
		return web.DecodeProblem(err)
	}
	now := h.now()
	uses := make([]store.KeyUse, len(rep.Uses))
	for i, u := range rep.Uses {
		uses[i] = store.KeyUse{Kid: u.Kid, At: minTime(u.LastUsed, now)}
	}
	name, serial := certificate(r.TLS)
	e := store.FleetEdge{ID: rep.Instance, Name: name, Serial: serial, AppliedSeq: rep.AppliedSeq, LastContact: now, Source: web.SourceAddr(r)}
	if err := h.store.ReportEdge(r.Context(), e, uses); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// certificate returns the subject's common name and the serial number,
// in hexadecimal, of the verified client certificate of cs, or "" and ""
// without one.
func certificate(cs *tls.ConnectionState) (name, serial string) {
	if cs == nil || len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return "", ""
	}
	leaf := cs.VerifiedChains[0][0]
	return leaf.Subject.CommonName, leaf.SerialNumber.Text(16)
}

// minTime returns the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if a.After(b) {
		return b
	}
	return a
}
