package console

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/health-data-connect/hdc/backend/audit/trail"
)

// auditSearch are the search form's fields, the parameters of GET
// /admin/v1/audit-events that the console offers.
var auditSearch = []string{"workspace", "agent", "entity", "action", "since", "until", "cursor"}

// auditView is a page of the audit search: the form's values, each event
// as a sentence with its FHIR JSON, the next page's link.
type auditView struct {
	Form   map[string]string
	Events []eventView
	Next   string
}

// eventView is an AuditEvent as a sentence, and its FHIR JSON.
type eventView struct {
	Sentence string
	JSON     string
}

// auditPage searches the audit trails, as GET /admin/v1/audit-events does,
// and shows each AuditEvent as a sentence.
func (s *Server) auditPage(r *http.Request) (view, error) {
	in := r.URL.Query()
	v, form := url.Values{}, map[string]string{}
	for _, name := range auditSearch {
		if val := in.Get(name); val != "" {
			v.Set(name, val)
			form[name] = val
		}
	}
	q, err := trail.ParseQuery(v)
	if err != nil {
		return view{}, err
	}
	q.Limit = pageSize
	p, err := s.api.SearchAudit(r.Context(), q)
	if err != nil {
		return view{}, err
	}
	av := auditView{Form: form}
	for _, raw := range p.Items {
		rec, err := RecordOf(raw)
		if err != nil {
			av.Events = append(av.Events, eventView{Sentence: "A record the console cannot read: " + err.Error(), JSON: indent(raw)})
			continue
		}
		av.Events = append(av.Events, eventView{Sentence: Sentence(rec), JSON: fhirJSON(rec)})
	}
	if p.Next != "" {
		av.Next = "/audit?" + pageLink(v, p.Next)
	}
	return view{Template: "audit", Title: "Audit", Nav: "audit", Data: av}, nil
}

// indent returns raw indented, as it is when it does not parse.
func indent(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// verifyView is the verification page: the report, and when there is no
// checkpoint yet to hold the trails to, the API's word for it.
type verifyView struct {
	trail.Report
	NoCheckpoint string
}

// verifyPage verifies every trail, as GET /admin/v1/audit/verify does;
// with no checkpoint yet (no_checkpoint), it shows the trails the backend
// verified and says what that could not show.
func (s *Server) verifyPage(r *http.Request) (view, error) {
	rep, err := s.api.VerifyAudit(r.Context())
	vv := verifyView{Report: rep}
	if p := trail.AsNoCheckpoint(err); p != nil {
		vv.NoCheckpoint, err = p.Detail, nil
	}
	if err != nil {
		return view{}, err
	}
	return view{Template: "verify", Title: "Audit verification", Nav: "audit", Data: vv}, nil
}
