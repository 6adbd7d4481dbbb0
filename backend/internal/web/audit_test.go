package web

import (
	"context"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/contract"
)

func TestAuditEvent(t *testing.T) {
	const (
		client  = "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01"
		grant   = "6b2dab63-4c8f-4e1f-8054-3f9f2d7c8b02"
		request = "7c6b5a49-3827-4160-9f5e-4d3c2b1a0f05"
	)
	tests := []struct {
		name     string
		remote   string
		headers  []string
		caller   *Caller
		fromEdge bool
		want     audit.Event
	}{
		{"a plain request of the edge", "127.0.0.1:5000",
			[]string{contract.HeaderClientIP, "203.0.113.9", contract.HeaderRequestID, request},
			&Caller{ClientID: client, WorkspaceID: "w1"}, true,
			audit.Event{Workspace: "w1", Client: client, Source: netip.MustParseAddr("203.0.113.9"), Request: request}},
		{"IPv6 kept whole, kid, grant", "127.0.0.1:5000",
			[]string{contract.HeaderClientIP, "2001:db8:1:2:3:4:5:6", contract.HeaderKeyID, "kid-1",
				contract.HeaderKeyClientID, client, contract.HeaderRequestID, request},
			&Caller{ClientID: client, WorkspaceID: "w2", GrantID: grant}, true,
			audit.Event{Workspace: "w2", Client: client, Grant: grant, Source: netip.MustParseAddr("2001:db8:1:2:3:4:5:6"), Kid: "kid-1", Request: request}},
		{"mapped IPv4 unmapped", "127.0.0.1:5000", []string{contract.HeaderClientIP, "::ffff:192.0.2.7", contract.HeaderRequestID, request}, nil, true,
			audit.Event{Source: netip.MustParseAddr("192.0.2.7"), Request: request}},
		{"not from the edge: the peer", "192.0.2.1:5000", []string{contract.HeaderClientIP, "203.0.113.9"}, nil, false,
			audit.Event{Source: netip.MustParseAddr("192.0.2.1")}},
		{"no caller: none of its fields", "127.0.0.1:5000", nil, nil, true,
			audit.Event{Source: netip.MustParseAddr("127.0.0.1")}},
		{"invalid values left out", "[fe80::1%eth0]:5000",
			[]string{contract.HeaderKeyID, "bad kid!", contract.HeaderRequestID, "not-a-uuid"},
			&Caller{ClientID: "not-a-uuid", WorkspaceID: "w1", GrantID: "g1"}, true,
			audit.Event{Source: netip.MustParseAddr("fe80::1")}},
		{"repeated headers left out", "127.0.0.1:5000",
			[]string{contract.HeaderRequestID, request, contract.HeaderRequestID, request, contract.HeaderKeyID, "a", contract.HeaderKeyID, "b"}, nil, true,
			audit.Event{Source: netip.MustParseAddr("127.0.0.1")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.remote
			for i := 0; i+1 < len(tt.headers); i += 2 {
				r.Header.Add(tt.headers[i], tt.headers[i+1])
			}
			if tt.fromEdge {
				r, _ = CheckEdge(false, r)
			}
			if tt.caller != nil {
				r = r.WithContext(context.WithValue(r.Context(), callerKey{}, *tt.caller))
			}
			got := AuditEvent(r)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("AuditEvent = %+v, want %+v", got, tt.want)
			}
			// Once the service sets the rest, the event may be recorded.
			got.At, got.Action, got.Outcome = time.Now(), audit.Login, audit.Success
			if got.Workspace == "" {
				got.Action, got.Outcome = audit.LoginFailed, audit.Denied
			}
			if err := got.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
