// Package fhir turns a health record into a FHIR R4 document Bundle and
// takes in the resources a parser found in it. The pieces any resource
// shares (its datatypes, derived ids, the searchset Bundle) are in
// datatypes.go and searchset.go, for the other views of the backend's data
// as FHIR (package audit/fhirview).
//
// The document of a record is assembled on every retrieval from the record
// and its stored resources, and is the same for the same record version:
// every id is derived from the record id (UUID version 5), and every time
// is the record's. Its shape:
//
//	Bundle (type document, identifier, timestamp, meta with the NRCES
//	DocumentBundle profile and security label V, link self)
//	├─ Composition    status preliminary → final → amended, one section
//	│                 for the uploaded file and one per parsed resource type
//	├─ Patient        the subject: the parser's first Patient, or a
//	│                 placeholder until one arrives
//	├─ Organization   the author: the workspace
//	├─ DocumentReference  the uploaded file (type, size, SHA-1, title, time)
//	└─ parsed resources
//
// Every entry has a urn:uuid fullUrl equal to its resource id, and every
// reference between entries is such a fullUrl.
package fhir

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strconv"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// Code systems, profiles and extensions the document uses.
const (
	// URNSystem is the identifier system of URN values (urn:uuid:…).
	URNSystem = "urn:ietf:rfc:3986"
	// DocumentBundleProfile is the NRCES (India NDHM) document bundle profile.
	DocumentBundleProfile = "https://nrces.in/ndhm/fhir/r4/StructureDefinition/DocumentBundle"
	// ConfidentialitySystem is HL7's confidentiality code system.
	ConfidentialitySystem = "http://terminology.hl7.org/CodeSystem/v3-Confidentiality"
	// CareContextExtension is the URL of the Composition extension holding
	// the record's care_context_id, under this project's tag URI space (as
	// for problem types).
	CareContextExtension = "tag:health-data-connect,2026:fhir:care-context-id"
	// WorkspaceSystem is the identifier system of workspace ids.
	WorkspaceSystem = "tag:health-data-connect,2026:workspace"
)

// derive returns the UUID named by the record id and a role.
func derive(recordID, role string) string {
	return uuid.NewSHA1(idSpace, []byte(recordID+"/"+role)).String()
}

// Document returns the FHIR document Bundle of r with its parsed resources
// (from store.ListRecordResources).
func Document(r store.Record, resources []store.Resource) ([]byte, error) {
	org := organization{
		ResourceType: "Organization",
		ID:           derive(r.ID, "Organization"),
		Identifier:   []Identifier{{System: WorkspaceSystem, Value: r.WorkspaceID}},
		Name:         "Workspace " + r.WorkspaceID,
	}
	subject, sections := sectionsOf(resources)
	var entries []entry
	if subject == "" {
		p := patient{ResourceType: "Patient", ID: derive(r.ID, "Patient")}
		subject = URN(p.ID)
		entries = append(entries, entry{FullURL: subject, Resource: p})
	}
	doc := uploadedFile(r, subject, URN(org.ID))
	comp := newComposition(r, subject, URN(org.ID))
	comp.Section = append([]section{{Title: "Uploaded file", Entry: []reference{{Reference: URN(doc.ID)}}}}, sections...)
	entries = append([]entry{
		{FullURL: URN(comp.ID), Resource: comp},
		{FullURL: URN(org.ID), Resource: org},
		{FullURL: URN(doc.ID), Resource: doc},
	}, entries...)
	for _, res := range resources {
		entries = append(entries, entry{FullURL: URN(res.ID), Resource: json.RawMessage(res.JSON)})
	}
	return json.Marshal(newBundle(r, entries))
}

// sectionsOf sorts the parsed resources into one section per resource type,
// in the order the types first appear, except the first Patient, which is
// the subject (empty when there is none).
func sectionsOf(resources []store.Resource) (subject string, sections []section) {
	byType := map[string]int{} // resource type → index in sections
	for _, res := range resources {
		if res.ResourceType == "Patient" && subject == "" {
			subject = URN(res.ID)
			continue
		}
		i, ok := byType[res.ResourceType]
		if !ok {
			i = len(sections)
			byType[res.ResourceType] = i
			sections = append(sections, section{Title: sectionTitle(res.ResourceType)})
		}
		sections[i].Entry = append(sections[i].Entry, reference{Reference: URN(res.ID)})
	}
	return subject, sections
}

// newComposition returns the document's Composition, without sections.
func newComposition(r store.Record, subject, author string) composition {
	ts := Instant(r.UpdatedAt)
	return composition{
		ResourceType: "Composition",
		ID:           derive(r.ID, "Composition"),
		Meta:         &meta{LastUpdated: ts},
		Extension:    []extension{{URL: CareContextExtension, ValueString: r.CareContextID}},
		Identifier:   Identifier{System: URNSystem, Value: "urn:uuid:" + derive(r.ID, "Composition")},
		Status:       compositionStatus(r.Version),
		Type:         concept{Text: "Health record of an uploaded document"},
		Subject:      reference{Reference: subject},
		Date:         ts,
		Author:       []reference{{Reference: author}},
		Title:        "Health record " + r.CareContextID,
	}
}

// uploadedFile returns the DocumentReference of the uploaded file.
func uploadedFile(r store.Record, subject, author string) documentReference {
	return documentReference{
		ResourceType:     "DocumentReference",
		ID:               derive(r.ID, "DocumentReference"),
		MasterIdentifier: &Identifier{System: URNSystem, Value: "urn:uuid:" + r.ID},
		Status:           "current",
		Type:             concept{Text: "Uploaded file"},
		Subject:          reference{Reference: subject},
		Date:             Instant(r.CreatedAt),
		Author:           []reference{{Reference: author}},
		Content: []content{{Attachment: attachment{
			ContentType: r.ContentType,
			Size:        r.Size,
			Hash:        base64.StdEncoding.EncodeToString(r.SHA1),
			Title:       r.Title,
			Creation:    Instant(r.CreatedAt),
		}}},
	}
}

// newBundle returns the document Bundle of r's current version.
func newBundle(r store.Record, entries []entry) bundle {
	ts := Instant(r.UpdatedAt)
	id := derive(r.ID, "Bundle/"+strconv.FormatInt(r.Version, 10))
	return bundle{
		ResourceType: "Bundle",
		ID:           id,
		Meta: meta{
			VersionID:   strconv.FormatInt(r.Version, 10),
			LastUpdated: ts,
			Profile:     []string{DocumentBundleProfile},
			Security:    []Coding{{System: ConfidentialitySystem, Code: "V", Display: "very restricted"}},
		},
		Identifier: Identifier{System: URNSystem, Value: URN(id)},
		Type:       "document",
		Timestamp:  ts,
		Link:       []link{{Relation: "self", URL: contract.PathRetrieve + "?identifier=" + url.QueryEscape(r.CareContextID)}},
		Entry:      entries,
	}
}

// compositionStatus follows the record's version: 1 is the upload alone,
// 2 adds the first parser results, later versions amend them.
func compositionStatus(version int64) string {
	switch {
	case version <= 1:
		return "preliminary"
	case version == 2:
		return "final"
	}
	return "amended"
}

// sectionTitles names the sections of common resource types; others are
// titled with the type's name.
var sectionTitles = map[string]string{
	"AllergyIntolerance":  "Allergies",
	"Condition":           "Conditions",
	"DiagnosticReport":    "Diagnostic reports",
	"Encounter":           "Encounters",
	"Immunization":        "Immunizations",
	"MedicationRequest":   "Medication requests",
	"MedicationStatement": "Medication statements",
	"Observation":         "Observations",
	"Procedure":           "Procedures",
	"ServiceRequest":      "Service requests",
}

func sectionTitle(resourceType string) string {
	if t, ok := sectionTitles[resourceType]; ok {
		return t
	}
	return resourceType
}

type bundle struct {
	ResourceType string     `json:"resourceType"`
	ID           string     `json:"id"`
	Meta         meta       `json:"meta"`
	Identifier   Identifier `json:"identifier"`
	Type         string     `json:"type"`
	Timestamp    string     `json:"timestamp"`
	Link         []link     `json:"link"`
	Entry        []entry    `json:"entry"`
}

type entry struct {
	FullURL  string `json:"fullUrl"`
	Resource any    `json:"resource"`
}

type reference struct {
	Reference string `json:"reference"`
}

type concept struct {
	Text string `json:"text"`
}

type extension struct {
	URL         string `json:"url"`
	ValueString string `json:"valueString"`
}

type section struct {
	Title string      `json:"title"`
	Entry []reference `json:"entry"`
}

type composition struct {
	ResourceType string      `json:"resourceType"`
	ID           string      `json:"id"`
	Meta         *meta       `json:"meta"`
	Extension    []extension `json:"extension"`
	Identifier   Identifier  `json:"identifier"`
	Status       string      `json:"status"`
	Type         concept     `json:"type"`
	Subject      reference   `json:"subject"`
	Date         string      `json:"date"`
	Author       []reference `json:"author"`
	Title        string      `json:"title"`
	Section      []section   `json:"section"`
}

type patient struct {
	ResourceType string `json:"resourceType"`
	ID           string `json:"id"`
}

type organization struct {
	ResourceType string       `json:"resourceType"`
	ID           string       `json:"id"`
	Identifier   []Identifier `json:"identifier"`
	Name         string       `json:"name"`
}

type documentReference struct {
	ResourceType     string      `json:"resourceType"`
	ID               string      `json:"id"`
	MasterIdentifier *Identifier `json:"masterIdentifier"`
	Status           string      `json:"status"`
	Type             concept     `json:"type"`
	Subject          reference   `json:"subject"`
	Date             string      `json:"date"`
	Author           []reference `json:"author"`
	Content          []content   `json:"content"`
}

type content struct {
	Attachment attachment `json:"attachment"`
}

type attachment struct {
	ContentType string `json:"contentType"`
	Size        int64  `json:"size"`
	Hash        string `json:"hash"`
	Title       string `json:"title,omitempty"`
	Creation    string `json:"creation"`
}
