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
		 "note":[{"text":"<b>&</b>"}],"performer":[{"reference":"https://hospital.example/fhir/Practitioner/x"}],
		 "contained":[{"resourceType":"Device","id":"d"}],"device":{"reference":"#d"}}
	]`), nil)
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
	for _, want := range []string{`"value":1.50`, `"reference":"https://hospital.example/fhir/Practitioner/x"`, `"reference":"#d"`, `"text":"<b>&</b>"`} {
		if !strings.Contains(string(res[1].JSON), want) {
			t.Errorf("%s lacks %s (kept as sent)", res[1].JSON, want)
		}
	}
}

// TestIngestAcrossSubmissions: a second submission for a record refers to
// the resources of the first by the names the first gave them, or by the
// ids it was answered; a dangling reference is refused, and so is a
// resource that takes a name the record already has.
func TestIngestAcrossSubmissions(t *testing.T) {
	first, err := Ingest([]byte(`{"resourceType":"Bundle","type":"collection","entry":[
		{"fullUrl":"urn:uuid:patient","resource":{"resourceType":"Patient","id":"pt"}},
		{"resource":{"resourceType":"Encounter","subject":{"reference":"Patient/pt"}}}]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	// What the store keeps (store.RecordAliases).
	known := map[string]string{}
	for _, r := range first {
		for _, a := range r.Aliases {
			known[a] = r.ID
		}
	}
	pt, enc := first[0].ID, first[1].ID
	for _, want := range []string{"urn:uuid:patient", "Patient/pt", "urn:uuid:" + pt, "Patient/" + pt} {
		if known[want] != pt {
			t.Errorf("alias %q = %q, want the Patient %s", want, known[want], pt)
		}
	}
	if known["Encounter/"+enc] != enc || len(first[1].Aliases) != 2 {
		t.Errorf("Encounter aliases = %q", first[1].Aliases)
	}

	second, err := Ingest([]byte(`[
		{"resourceType":"Observation","subject":{"reference":"Patient/pt"},"encounter":{"reference":"urn:uuid:`+enc+`"}},
		{"resourceType":"Condition","subject":{"reference":"urn:uuid:patient"},"encounter":{"reference":"Encounter/`+enc+`"}}]`), known)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range second {
		var m map[string]any
		if err := json.Unmarshal(r.JSON, &m); err != nil {
			t.Fatal(err)
		}
		if m["subject"].(map[string]any)["reference"] != "urn:uuid:"+pt || m["encounter"].(map[string]any)["reference"] != "urn:uuid:"+enc {
			t.Errorf("%s: references not resolved to the first submission's resources", r.JSON)
		}
	}

	for _, tt := range []struct {
		name, in string
		conflict bool
	}{
		{"unknown Type/id", `[{"resourceType":"Observation","subject":{"reference":"Patient/nobody"}}]`, false},
		{"unknown urn:uuid", `[{"resourceType":"Observation","subject":{"reference":"urn:uuid:nobody"}}]`, false},
		{"relative URL", `[{"resourceType":"Observation","subject":{"reference":"fhir/Patient/pt"}}]`, false},
		{"another scheme", `[{"resourceType":"Observation","subject":{"reference":"urn:oid:1.2.3"}}]`, false},
		{"nested in a list", `[{"resourceType":"Observation","performer":[{"reference":"Practitioner/x"}]}]`, false},
		{"URL without host", `[{"resourceType":"Observation","subject":{"reference":"https:///Patient/pt"}}]`, false},
		{"Type/id taken", `[{"resourceType":"Patient","id":"pt"}]`, true},
		{"fullUrl taken", `{"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"urn:uuid:patient","resource":{"resourceType":"Basic"}}]}`, true},
		{"assigned id taken", `[{"resourceType":"Patient","id":"` + pt + `"}]`, true},
	} {
		_, err := Ingest([]byte(tt.in), known)
		var e *Error
		if !errors.As(err, &e) || e.Conflict != tt.conflict {
			t.Errorf("%s: Ingest = %v, want an *Error (conflict %v)", tt.name, err, tt.conflict)
			continue
		}
		if strings.Contains(e.Error(), "nobody") || strings.Contains(e.Error(), "Practitioner/x") {
			t.Errorf("%s: error %q quotes the submission", tt.name, e)
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
		if _, err := Ingest([]byte(in), nil); !errors.As(err, &e) {
			t.Errorf("Ingest(%.60q) = %v, want an *Error", in, err)
		}
	}
}

func FuzzIngest(f *testing.F) {
	f.Add([]byte(`[{"resourceType":"Patient","id":"p"},{"resourceType":"Observation","subject":{"reference":"Patient/p"}}]`))
	f.Add([]byte(`{"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"urn:uuid:1","resource":{"resourceType":"Basic"}}]}`))
	f.Add([]byte(`[{"resourceType":"Observation","subject":{"reference":"Patient/earlier"},"focus":[{"reference":"#c"},{"reference":"https://a.example/R/1"}]}]`))
	known := map[string]string{"Patient/earlier": "0b8f1c3e-8f6a-4a43-9d57-3c1b2f1e9a10"}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Ingest(data, known)
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
