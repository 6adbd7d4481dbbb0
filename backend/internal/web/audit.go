package web

import (
	"net/http"
	"net/netip"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
)

// AuditEvent returns the audit event of r as far as the request tells
// it; the time, the action, the outcome and the entity are for the
// service to set. It is the one place where the request's fields of the
// trail are read:
//   - Workspace, Client and Grant: the Caller that RequireCaller admitted,
//     when there is one (the workspace acted in: for a sharing grant, the
//     grant's, whose owner then sees the access);
//   - Source: the client's address as the edge saw it
//     (contract.HeaderClientIP) when the request came from the edge, the
//     connection's peer otherwise; whole, unlike SourceAddr's /64;
//   - Kid: the key an encrypted request was opened with
//     (contract.HeaderKeyID);
//   - Request: the edge's request id (contract.HeaderRequestID).
//
// A value that is not of its field's syntax (audit.Event.Validate) is
// left out, so the event of an admitted request always validates once
// its action and outcome are set.
func AuditEvent(r *http.Request) audit.Event {
	e := audit.Event{Source: auditSource(r)}
	if c, ok := CallerFrom(r.Context()); ok && contract.ValidID(c.WorkspaceID) && contract.IsUUID(c.ClientID) {
		e.Workspace, e.Client = c.WorkspaceID, c.ClientID
		if contract.IsUUID(c.GrantID) {
			e.Grant = c.GrantID
		}
	}
	if v, ok := single(r.Header, contract.HeaderKeyID); ok && clientkey.ValidKid(v) {
		e.Kid = v
	}
	if v, ok := single(r.Header, contract.HeaderRequestID); ok && contract.IsUUID(v) {
		e.Request = v
	}
	return e
}

// auditSource is the address SourceAddr starts from, whole and without
// zone; the zero Addr when there is none.
func auditSource(r *http.Request) netip.Addr {
	a := peerAddr(r)
	if fromEdge, _ := r.Context().Value(edgeKey{}).(bool); fromEdge {
		if v := r.Header.Values(contract.HeaderClientIP); len(v) == 1 {
			if ea, err := netip.ParseAddr(v[0]); err == nil {
				a = ea.Unmap()
			}
		}
	}
	return a.WithZone("")
}
