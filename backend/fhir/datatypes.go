package fhir

import (
	"time"

	"github.com/google/uuid"
)

// idSpace namespaces the ids this package derives (UUID version 5).
var idSpace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("tag:health-data-connect,2026:fhir"))

// Namespace returns the namespace of the ids derived for the resources of
// a kind (an AuditEvent's from its record's place, say): a UUID under
// this project's FHIR namespace, so that derived ids are stable.
func Namespace(kind string) uuid.UUID { return uuid.NewSHA1(idSpace, []byte(kind)) }

// URN returns the UUID id as a urn:uuid URI: an entry's fullUrl, and a
// reference to it.
func URN(id string) string { return "urn:uuid:" + id }

// Instant formats t as a FHIR instant (also a valid dateTime).
func Instant(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// Coding is a FHIR Coding: a code of a code system, and its display.
type Coding struct {
	System  string `json:"system"`
	Code    string `json:"code"`
	Display string `json:"display"`
}

// Identifier is a FHIR Identifier: a value in an identifier system.
type Identifier struct {
	System string `json:"system"`
	Value  string `json:"value"`
}

type meta struct {
	VersionID   string   `json:"versionId,omitempty"`
	LastUpdated string   `json:"lastUpdated"`
	Profile     []string `json:"profile,omitempty"`
	Security    []Coding `json:"security,omitempty"`
}

type link struct {
	Relation string `json:"relation"`
	URL      string `json:"url"`
}
