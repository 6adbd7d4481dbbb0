package console

import (
	"net/http"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
)

// exportLink is the download of every record the audit search v selects,
// from the first: its page's cursor left out.
func exportLink(v url.Values) string {
	out := url.Values{}
	for k, vs := range v {
		if k != "cursor" {
			out[k] = vs
		}
	}
	if len(out) == 0 {
		return "/audit/export"
	}
	return "/audit/export?" + out.Encode()
}

// auditExport downloads every record the audit search's filters select
// (from the first, a page's cursor aside) as FHIR AuditEvent NDJSON, as
// hdc audit export writes it: GET /admin/v1/audit-events/export streamed
// through, a file for the browser to save. The API records the export,
// naming the person. Refused before anything was written, it is a problem
// page; broken off after, the download is aborted rather than left short.
func (s *Server) auditExport(w http.ResponseWriter, r *http.Request) {
	_, _, q, err := auditQuery(r.URL.Query())
	if err != nil {
		s.showError(w, err)
		return
	}
	q.Cursor = ""
	out := &download{w: w, contentType: adminapi.ContentTypeNDJSON,
		name: "hdc-audit-" + time.Now().UTC().Format("20060102T150405Z") + ".ndjson"}
	err = s.api.ExportAudit(r.Context(), q, out)
	switch {
	case err != nil && !out.started:
		s.showError(w, err)
	case err != nil:
		s.log.Warn("console: an audit export broken off", zap.Error(err))
		panic(http.ErrAbortHandler)
	default:
		out.start() // an export of no record is an empty file
	}
}

// download is an answer that is a file to save: its headers go with its
// first bytes, so that a refusal before them can still be a page.
type download struct {
	w                 http.ResponseWriter
	contentType, name string
	started           bool
}

// start sends the download's headers, once.
func (d *download) start() {
	if d.started {
		return
	}
	d.started = true
	h := d.w.Header()
	h.Set("Content-Type", d.contentType)
	h.Set("Content-Disposition", `attachment; filename="`+d.name+`"`)
	d.w.WriteHeader(http.StatusOK)
}

func (d *download) Write(b []byte) (int, error) {
	d.start()
	return d.w.Write(b)
}
