package fhir

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Match is a resource a search matched, with its id.
type Match struct {
	ID string
	// Resource is the resource, which encoding/json encodes.
	Resource any
}

// Searchset returns matches, one page of a search answered at time at, as
// a FHIR R4 searchset Bundle with links self and, unless next is empty
// (the last page), next. Every entry's fullUrl is urn:uuid:<its resource
// id>, and its search mode "match". It states no total.
func Searchset(matches []Match, self, next string, at time.Time) ([]byte, error) {
	links := []link{{Relation: "self", URL: self}}
	if next != "" {
		links = append(links, link{Relation: "next", URL: next})
	}
	entries := make([]searchEntry, 0, len(matches))
	for _, m := range matches {
		entries = append(entries, searchEntry{FullURL: URN(m.ID), Resource: m.Resource, Search: searchMode{Mode: "match"}})
	}
	ts := Instant(at)
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
	Resource any        `json:"resource"`
	Search   searchMode `json:"search"`
}

type searchMode struct {
	Mode string `json:"mode"`
}
