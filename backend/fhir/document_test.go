package fhir_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/fhir"
	"github.com/health-data-connect/hdc/backend/fhir/fhirtest"
	"github.com/health-data-connect/hdc/backend/store"
)

func testRecord() store.Record {
	created := time.Date(2026, 5, 1, 10, 0, 0, 123456000, time.UTC)
	return store.Record{
		ID: "0b8f1c3e-8f6a-4a43-9d57-3c1b2f1e9a10", CareContextID: "5d9e1a2b-7c3d-4e5f-8a9b-0c1d2e3f4a5b",
		WorkspaceID: "acme", ClientID: "c1", BlobKey: "ab", SHA1: bytes.Repeat([]byte{0xab}, 20), Size: 1234,
		ContentType: "audio/wave", Title: "visit.wav", Status: store.RecordPending, Version: 1,
		CreatedAt: created, UpdatedAt: created,
	}
}

const parserBundle = `{
  "resourceType": "Bundle", "type": "collection",
  "entry": [
    {"fullUrl": "urn:uuid:p1", "resource": {"resourceType": "Patient", "id": "p1", "name": [{"text": "Asha Rao"}]}},
    {"fullUrl": "urn:uuid:o1", "resource": {"resourceType": "Observation", "id": "o1", "status": "final",
      "code": {"text": "Body weight"}, "subject": {"reference": "Patient/p1"},
      "valueQuantity": {"value": 61.50, "unit": "kg"}}},
    {"resource": {"resourceType": "Condition", "subject": {"reference": "urn:uuid:p1"}, "code": {"text": "Fever"}}},
    {"resource": {"resourceType": "Observation", "status": "final", "code": {"text": "Temperature"},
      "hasMember": [{"reference": "Observation/o1"}], "subject": {"reference": "https://registry.example/fhir/Patient/elsewhere"}}}
  ]
}`

func TestDocumentBeforeAndAfterParsing(t *testing.T) {
	r := testRecord()
	data, err := fhir.Document(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := fhirtest.CheckDocument(data)
	if err != nil {
		t.Fatalf("preliminary document breaks rules:\n%v\n%s", err, data)
	}
	if res.Composition["status"] != "preliminary" || len(res.Entries) != 4 {
		t.Fatalf("preliminary document: status %v, %d entries", res.Composition["status"], len(res.Entries))
	}
	first := res.Bundle["identifier"]
	again, _ := fhir.Document(r, nil)
	if !bytes.Equal(data, again) {
		t.Fatal("the same record version gives different documents")
	}
	docRef := findType(res, "DocumentReference")
	att := docRef["content"].([]any)[0].(map[string]any)["attachment"].(map[string]any)
	if att["contentType"] != "audio/wave" || att["size"] != 1234.0 || att["hash"] != "q6urq6urq6urq6urq6urq6urq6s=" ||
		att["title"] != "visit.wav" || att["creation"] != "2026-05-01T10:00:00.123Z" || docRef["status"] != "current" {
		t.Fatalf("attachment = %v", att)
	}

	resources, err := fhir.Ingest([]byte(parserBundle), nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Version, r.Status, r.UpdatedAt = 2, store.RecordParsed, r.UpdatedAt.Add(time.Minute)
	for i := range resources {
		resources[i].RecordID, resources[i].Seq = r.ID, int64(i+1)
	}
	data, err = fhir.Document(r, resources)
	if err != nil {
		t.Fatal(err)
	}
	res, err = fhirtest.CheckDocument(data)
	if err != nil {
		t.Fatalf("final document breaks rules:\n%v\n%s", err, data)
	}
	if res.Composition["status"] != "final" || res.Bundle["timestamp"] != "2026-05-01T10:01:00.123Z" {
		t.Fatalf("final document: status %v, timestamp %v", res.Composition["status"], res.Bundle["timestamp"])
	}
	if equalJSON(first, res.Bundle["identifier"]) {
		t.Fatal("a new version of the document kept the identifier")
	}
	// The parser's Patient is the subject and is not placeholder-duplicated.
	patientURL := "urn:uuid:" + resources[0].ID
	if ref := res.Composition["subject"].(map[string]any)["reference"]; ref != patientURL || countType(res, "Patient") != 1 {
		t.Fatalf("subject %v, %d patients", ref, countType(res, "Patient"))
	}
	var titles []string
	for _, s := range res.Composition["section"].([]any) {
		titles = append(titles, s.(map[string]any)["title"].(string))
	}
	if want := []string{"Uploaded file", "Observations", "Conditions"}; !equalJSON(titles, want) {
		t.Fatalf("sections %q, want %q", titles, want)
	}

	r.Version = 3
	data, _ = fhir.Document(r, resources)
	if res, err := fhirtest.CheckDocument(data); err != nil || res.Composition["status"] != "amended" {
		t.Fatalf("version 3: %v, %v", err, res.Composition["status"])
	}
}

// TestDocumentOfTwoSubmissions: references of a second submission to the
// resources of the first resolve inside the document.
func TestDocumentOfTwoSubmissions(t *testing.T) {
	r := testRecord()
	first, err := fhir.Ingest([]byte(parserBundle), nil)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]string{}
	for _, res := range first {
		for _, a := range res.Aliases {
			known[a] = res.ID
		}
	}
	second, err := fhir.Ingest([]byte(`[{"resourceType":"Observation","status":"final","code":{"text":"Pulse"},
		"subject":{"reference":"Patient/p1"},"derivedFrom":[{"reference":"urn:uuid:o1"}]}]`), known)
	if err != nil {
		t.Fatal(err)
	}
	resources := append(first, second...)
	for i := range resources {
		resources[i].RecordID, resources[i].Seq = r.ID, int64(i+1)
	}
	r.Version, r.Status = 3, store.RecordParsed
	data, err := fhir.Document(r, resources)
	if err != nil {
		t.Fatal(err)
	}
	res, err := fhirtest.CheckDocument(data)
	if err != nil {
		t.Fatalf("document breaks rules:\n%v\n%s", err, data)
	}
	pulse := res.Entries["urn:uuid:"+second[0].ID]
	if pulse["subject"].(map[string]any)["reference"] != "urn:uuid:"+first[0].ID {
		t.Fatalf("the second submission's subject is not the first's Patient: %v", pulse["subject"])
	}
}

func findType(res *fhirtest.Result, rt string) map[string]any {
	for _, e := range res.Entries {
		if e["resourceType"] == rt {
			return e
		}
	}
	return nil
}

func countType(res *fhirtest.Result, rt string) int {
	n := 0
	for _, e := range res.Entries {
		if e["resourceType"] == rt {
			n++
		}
	}
	return n
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
