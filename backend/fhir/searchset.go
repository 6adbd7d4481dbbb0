package fhir

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/audit"
)

// AuditPage is one page of a search of the audit trail.
type AuditPage struct {
	// Records are the page's records, in seq order.
	Records []audit.Record
	// Self is the URL of the page's search (path and query).
	Self string
	// Next is the URL of the next page, empty on the last page.
	Next string
	// At is when the search was answered (the Bundle's timestamp).
	At time.Time
}

// AuditSearchset returns p as a FHIR R4 searchset Bundle of AuditEvent
// resources, with links self and, unless p is the last page, next. Every
// entry's fullUrl is urn:uuid:<its resource id>, and its search mode
// "match". It has no total: counting every match of a search would cost a
// scan of the chain on every page.
func AuditSearchset(p AuditPage) ([]byte, error) {
	links := []link{{Relation: "self", URL: p.Self}}
	if p.Next != "" {
		links = append(links, link{Relation: "next", URL: p.Next})
	}
	entries := make([]searchEntry, 0, len(p.Records))
	for _, r := range p.Records {
		ev := auditEventOf(r)
		entries = append(entries, searchEntry{FullURL: urn(ev.ID), Resource: ev, Search: searchMode{Mode: "match"}})
	}
	ts := instant(p.At)
	return marshalPlain(searchset{
		ResourceType: "Bundle",
		ID:           uuid.NewString(),
		Meta:         meta{LastUpdated: ts},
		Type:         "searchset",
		Timestamp:    ts,
		Link:         links,
		Entry:        entries,
	})
}

// marshalPlain is json.Marshal without HTML escaping, so that the &
// between a link's parameters stays one.
func marshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

type searchset struct {
	ResourceType string        `json:"resourceType"`
	ID           string        `json:"id"`
	Meta         meta          `json:"meta"`
	Type         string        `json:"type"`
	Timestamp    string        `json:"timestamp"`
	Link         []link        `json:"link"`
	Entry        []searchEntry `json:"entry,omitempty"`
}

type searchEntry struct {
	FullURL  string     `json:"fullUrl"`
	Resource auditEvent `json:"resource"`
	Search   searchMode `json:"search"`
}

type searchMode struct {
	Mode string `json:"mode"`
}
