package fhir

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestIngestRewritesReferences(t *testing.T) {
	res, err := Ingest([]byte(`[
		{"resourceType":"Patient","id":"p1"},
		{"resourceType":"Observation","subject":{"reference":"Patient/p1"},"valueQuantity":{"value":1.50},
		 "note":[{"text":"<b>&</b>"}],"performer":[{"reference":"Practitioner/x"}]}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].ResourceType != "Patient" || res[1].ResourceType != "Observation" || res[0].ID == "p1" {
		t.Fatalf("resources = %+v", res)
	}
	var obs map[string]any
	if err := json.Unmarshal(res[1].JSON, &obs); err != nil {
		t.Fatal(err)
	}
	if obs["id"] != res[1].ID || obs["subject"].(map[string]any)["reference"] != "urn:uuid:"+res[0].ID {
		t.Fatalf("observation = %s", res[1].JSON)
	}
	for _, want := range []string{`"value":1.50`, `"reference":"Practitioner/x"`, `"text":"<b>&</b>"`} {
		if !strings.Contains(string(res[1].JSON), want) {
			t.Errorf("%s lacks %s (kept as sent)", res[1].JSON, want)
		}
	}
}

func TestIngestRejects(t *testing.T) {
	many := "[" + strings.Repeat(`{"resourceType":"Basic"},`, MaxResources) + `{"resourceType":"Basic"}]`
	for _, in := range []string{
		``, `x`, `null`, `"Patient"`, `[]`, `[1]`, `[{}]`, many,
		`[{"resourceType":"Patient"}] x`,
		`[{"resourceType":"Patient"}]]`,
		`[{"resourceType":"patient"}]`,
		`[{"resourceType":"Bundle"}]`,
		`[{"resourceType":"Composition"}]`,
		`[{"resourceType":"Patient","id":"a b"}]`,
		`[{"resourceType":"Patient","id":7}]`,
		`[{"resourceType":"Patient","id":"a"},{"resourceType":"Patient","id":"a"}]`,
		`{"resourceType":"Bundle","type":"document","entry":[{"resource":{"resourceType":"Patient"}}]}`,
		`{"resourceType":"Bundle","type":"collection"}`,
		`{"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"urn:uuid:a"}]}`,
		`{"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"u","resource":{"resourceType":"Basic"}},{"fullUrl":"u","resource":{"resourceType":"Basic"}}]}`,
		`{"resourceType":"Patient"}`,
	} {
		var e *Error
		if _, err := Ingest([]byte(in)); !errors.As(err, &e) {
			t.Errorf("Ingest(%.60q) = %v, want an *Error", in, err)
		}
	}
}

func FuzzIngest(f *testing.F) {
	f.Add([]byte(`[{"resourceType":"Patient","id":"p"},{"resourceType":"Observation","subject":{"reference":"Patient/p"}}]`))
	f.Add([]byte(`{"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"urn:uuid:1","resource":{"resourceType":"Basic"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Ingest(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		for _, r := range res {
			var m map[string]any
			if err := json.Unmarshal(r.JSON, &m); err != nil || m["id"] != r.ID || m["resourceType"] != r.ResourceType {
				t.Fatalf("stored resource %s does not match %+v (%v)", r.JSON, r, err)
			}
		}
	})
}
