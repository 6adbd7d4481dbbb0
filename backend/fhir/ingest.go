package fhir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/store"
)

// MaxResources bounds one submission of parser results.
const MaxResources = 1000

// Error is a mistake in a submission of parser results.
type Error struct{ msg string }

// Error implements error.
func (e *Error) Error() string { return e.msg }

func errorf(format string, args ...any) error { return &Error{msg: fmt.Sprintf(format, args...)} }

var (
	resourceTypePattern = regexp.MustCompile(`^[A-Z][A-Za-z]{1,63}$`)
	idPattern           = regexp.MustCompile(`^[A-Za-z0-9\-.]{1,64}$`)
)

// Ingest reads a parser's results for a record: a FHIR Bundle of type
// collection, or a JSON array of resources. Each resource must be an object
// with a resourceType (not Bundle or Composition: the document has its own)
// and, if it has one, a valid id. Ingest gives every resource a new UUID id,
// and rewrites references between the submitted resources (to an entry's
// fullUrl, or to "Type/id") to the new urn:uuid fullUrls, so they resolve
// inside the document. Other content is kept as sent, numbers digit for
// digit.
func Ingest(data []byte) ([]store.Resource, error) {
	var top any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, errorf("the body is not JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errorf("data after the JSON value")
	}
	type item struct {
		fullURL  string
		resource map[string]any
	}
	var items []item
	switch top := top.(type) {
	case []any:
		for i, v := range top {
			res, ok := v.(map[string]any)
			if !ok {
				return nil, errorf("element %d is not a resource object", i)
			}
			items = append(items, item{resource: res})
		}
	case map[string]any:
		if top["resourceType"] != "Bundle" || top["type"] != "collection" {
			return nil, errorf("the body must be a Bundle of type collection or an array of resources")
		}
		list, ok := top["entry"].([]any)
		if !ok {
			return nil, errorf("the Bundle has no entry array")
		}
		for i, v := range list {
			e, ok := v.(map[string]any)
			res, okRes := e["resource"].(map[string]any)
			if !ok || !okRes {
				return nil, errorf("entry %d has no resource object", i)
			}
			full, _ := e["fullUrl"].(string)
			items = append(items, item{fullURL: full, resource: res})
		}
	default:
		return nil, errorf("the body must be a Bundle of type collection or an array of resources")
	}
	if len(items) == 0 || len(items) > MaxResources {
		return nil, errorf("a submission holds 1 to %d resources", MaxResources)
	}

	renamed := map[string]string{} // old reference → new fullUrl
	out := make([]store.Resource, len(items))
	for i, it := range items {
		rt, _ := it.resource["resourceType"].(string)
		switch {
		case !resourceTypePattern.MatchString(rt):
			return nil, errorf("resource %d has no valid resourceType", i)
		case rt == "Bundle" || rt == "Composition":
			return nil, errorf("resource %d is a %s; the document provides its own", i, rt)
		}
		newID := uuid.NewString()
		old := []string{it.fullURL}
		if id, present := it.resource["id"]; present {
			s, ok := id.(string)
			if !ok || !idPattern.MatchString(s) {
				return nil, errorf("resource %d has an invalid id", i)
			}
			old = append(old, rt+"/"+s)
		}
		for _, o := range old {
			if o == "" {
				continue
			}
			if _, dup := renamed[o]; dup {
				return nil, errorf("resource %d repeats the identity of an earlier one", i)
			}
			renamed[o] = urn(newID)
		}
		it.resource["id"] = newID
		out[i] = store.Resource{ResourceType: rt, ID: newID}
	}
	for i, it := range items {
		rewrite(it.resource, renamed)
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(it.resource); err != nil {
			return nil, err
		}
		out[i].JSON = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	return out, nil
}

// rewrite replaces, anywhere inside v, a "reference" string member found in
// renamed by its new value.
func rewrite(v any, renamed map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "reference" {
				if n, ok := renamed[s]; ok {
					v[k] = n
				}
				continue
			}
			rewrite(x, renamed)
		}
	case []any:
		for _, x := range v {
			rewrite(x, renamed)
		}
	}
}
