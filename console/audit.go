package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/problem"
)

// auditSearch are the search form's fields, the parameters of GET
// /admin/v1/audit-events that the console offers.
var auditSearch = []string{"workspace", "agent", "entity", "action", "since", "until", "order", "cursor"}

// auditView is a page of the audit search: the form's values, each event
// as a sentence with its FHIR JSON, the next page's link.
type auditView struct {
	Form   map[string]string
	Events []eventView
	Next   string
	// Export downloads every record the form selects (auditExport).
	Export string
}

// eventView is an AuditEvent as a sentence, and its FHIR JSON.
type eventView struct {
	Sentence string
	JSON     string
}

// auditPage searches the audit trails, as GET /admin/v1/audit-events does,
// newest first across every trail unless the form asks oldest first
// (trail by trail), and shows each AuditEvent as a sentence.
func (s *Server) auditPage(r *http.Request) (view, error) {
	v, form, q, err := auditQuery(r.URL.Query())
	if err != nil {
		return view{}, err
	}
	q.Limit = pageSize
	p, err := s.api.SearchAudit(r.Context(), q)
	if err != nil {
		return view{}, err
	}
	av := auditView{Form: form, Export: exportLink(v)}
	names := map[string]string{}
	for _, raw := range p.Items {
		rec, err := RecordOf(raw)
		if err != nil {
			av.Events = append(av.Events, eventView{Sentence: "A record the console cannot read: " + err.Error(), JSON: indent(raw)})
			continue
		}
		if err := s.nameClients(r.Context(), rec, names); err != nil {
			return view{}, err
		}
		av.Events = append(av.Events, eventView{Sentence: Sentence(rec, names), JSON: fhirJSON(rec)})
	}
	if p.Next != "" {
		av.Next = "/audit?" + pageLink(v, p.Next)
	}
	return view{Template: "audit", Title: "Audit", Nav: "audit", Data: av}, nil
}

// auditQuery reads the search form's fields of in: as the query of a
// page (v), as the form shows them, and as the API's query, newest first
// across every trail unless the form asks oldest first (trail by trail);
// an order of neither is a 400 problem.
func auditQuery(in url.Values) (v url.Values, form map[string]string, q adminapi.AuditQuery, err error) {
	v, form = url.Values{}, map[string]string{}
	for _, name := range auditSearch {
		if val := in.Get(name); val != "" {
			v.Set(name, val)
			form[name] = val
		}
	}
	if o := form["order"]; o != "" && o != adminapi.AuditNewest && o != adminapi.AuditOldest {
		return v, form, q, invalid("order must be newest or oldest.")
	}
	q = adminapi.AuditQuery{Workspace: form["workspace"], Scoped: form["workspace"] != "", Agent: form["agent"], Entity: form["entity"],
		Action: form["action"], Since: form["since"], Until: form["until"], Newest: form["order"] != adminapi.AuditOldest,
		Cursor: form["cursor"]}
	return v, form, q, nil
}

// nameClients adds to names the name of each client rec names (its actor,
// its entity, the client whose key a key action concerns) that names does
// not hold yet, "" for a client without a name or gone.
func (s *Server) nameClients(ctx context.Context, rec audit.Record, names map[string]string) error {
	ids := []string{rec.Client, rec.Owner}
	if rec.Entity.Kind == audit.EntityClient {
		ids = append(ids, rec.Entity.ID)
	}
	for _, id := range ids {
		if _, known := names[id]; known || id == "" {
			continue
		}
		c, err := s.api.GetClient(ctx, id)
		var p *problem.Problem
		if err != nil && !(errors.As(err, &p) && p.Code == problem.CodeNotFound) {
			return err
		}
		names[id] = c.Name
	}
	return nil
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
	adminapi.AuditReport
	NoCheckpoint string
}

// verifyPage verifies every trail, as GET /admin/v1/audit/verify does;
// with no checkpoint yet (no_checkpoint), it shows the trails the backend
// verified and says what that could not show.
func (s *Server) verifyPage(r *http.Request) (view, error) {
	rep, err := s.api.VerifyAudit(r.Context())
	vv := verifyView{AuditReport: rep}
	if p := adminapi.AsNoCheckpoint(err); p != nil {
		vv.NoCheckpoint, err = p.Detail, nil
	}
	if err != nil {
		return view{}, err
	}
	return view{Template: "verify", Title: "Audit verification", Nav: "audit", Data: vv}, nil
}
