package fhir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/store"
)

// MaxResources bounds one submission of parser results.
const MaxResources = 1000

// Error is a mistake in a submission of parser results. Its message never
// quotes the submission.
type Error struct {
	msg string
	// Conflict is set when the submission is well formed but names a
	// resource by an alias the record already has.
	Conflict bool
}

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
// and, if it has one, a valid id. Ingest gives every resource a new UUID id
// and rewrites every reference so that it resolves inside the document:
//
//   - to a resource of the submission, by its entry's fullUrl or its
//     "Type/id", or to one of an earlier submission for the record, by its
//     alias in known (store.RecordAliases), becomes the new urn:uuid fullUrl;
//   - an absolute http(s) URL (a resource outside the document) and a
//     "#id" reference to a contained resource are kept;
//   - anything else resolves to nothing, and the submission is refused.
//
// Each returned resource carries its aliases for later submissions: its
// fullUrl and "Type/id" as submitted, and as assigned. A submitted alias
// the record already has is refused with a Conflict Error. Other content is
// kept as sent, numbers digit for digit.
func Ingest(data []byte, known map[string]string) ([]store.Resource, error) {
	items, err := parseSubmission(data)
	if err != nil {
		return nil, err
	}
	out, renamed, err := rename(items, known)
	if err != nil {
		return nil, err
	}
	resolve := func(ref string) (string, bool) {
		if n, ok := renamed[ref]; ok {
			return n, true
		}
		if id, ok := known[ref]; ok {
			return URN(id), true
		}
		return ref, strings.HasPrefix(ref, "#") || external(ref)
	}
	for i, it := range items {
		if !rewrite(it.resource, resolve) {
			return nil, errorf("resource %d has a reference that resolves to nothing: refer to a resource of the submission or the record "+
				"(by fullUrl or Type/id), to a contained one (#id) or to an absolute http(s) URL", i)
		}
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

// item is one resource of a submission, with its entry's fullUrl.
type item struct {
	fullURL  string
	resource map[string]any
}

// parseSubmission reads a submission's resources: the entries of a Bundle
// of type collection, or the elements of an array. Numbers stay as sent.
func parseSubmission(data []byte) ([]item, error) {
	var top any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, errorf("the body is not JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errorf("data after the JSON value")
	}
	var (
		items []item
		err   error
	)
	switch top := top.(type) {
	case []any:
		items, err = arrayItems(top)
	case map[string]any:
		items, err = bundleItems(top)
	default:
		err = errorf("the body must be a Bundle of type collection or an array of resources")
	}
	if err == nil && (len(items) == 0 || len(items) > MaxResources) {
		err = errorf("a submission holds 1 to %d resources", MaxResources)
	}
	return items, err
}

func arrayItems(list []any) ([]item, error) {
	items := make([]item, 0, len(list))
	for i, v := range list {
		res, ok := v.(map[string]any)
		if !ok {
			return nil, errorf("element %d is not a resource object", i)
		}
		items = append(items, item{resource: res})
	}
	return items, nil
}

func bundleItems(b map[string]any) ([]item, error) {
	if b["resourceType"] != "Bundle" || b["type"] != "collection" {
		return nil, errorf("the body must be a Bundle of type collection or an array of resources")
	}
	list, ok := b["entry"].([]any)
	if !ok {
		return nil, errorf("the Bundle has no entry array")
	}
	items := make([]item, 0, len(list))
	for i, v := range list {
		e, ok := v.(map[string]any)
		res, okRes := e["resource"].(map[string]any)
		if !ok || !okRes {
			return nil, errorf("entry %d has no resource object", i)
		}
		full, _ := e["fullUrl"].(string)
		items = append(items, item{fullURL: full, resource: res})
	}
	return items, nil
}

// rename gives every resource a new UUID id and returns the resources to
// store, without their JSON yet, and the map from each old reference (its
// fullUrl, its Type/id) to its new fullUrl.
func rename(items []item, known map[string]string) ([]store.Resource, map[string]string, error) {
	renamed := map[string]string{} // old reference → new fullUrl
	out := make([]store.Resource, len(items))
	for i, it := range items {
		rt, _ := it.resource["resourceType"].(string)
		switch {
		case !resourceTypePattern.MatchString(rt):
			return nil, nil, errorf("resource %d has no valid resourceType", i)
		case rt == "Bundle" || rt == "Composition":
			return nil, nil, errorf("resource %d is a %s; the document provides its own", i, rt)
		}
		old, err := aliases(i, it, rt)
		if err != nil {
			return nil, nil, err
		}
		newID := uuid.NewString()
		for _, o := range old {
			if _, dup := renamed[o]; dup {
				return nil, nil, errorf("resource %d repeats the identity of an earlier one", i)
			}
			if _, dup := known[o]; dup {
				return nil, nil, &Error{msg: fmt.Sprintf("resource %d has the identity (fullUrl or Type/id) of a resource the record already has", i), Conflict: true}
			}
			renamed[o] = URN(newID)
		}
		it.resource["id"] = newID
		out[i] = store.Resource{ResourceType: rt, ID: newID, Aliases: append(old, URN(newID), rt+"/"+newID)}
	}
	return out, renamed, nil
}

// aliases returns the references by which the submission names resource i:
// its entry's fullUrl and its "Type/id".
func aliases(i int, it item, rt string) ([]string, error) {
	var old []string
	if it.fullURL != "" {
		old = append(old, it.fullURL)
	}
	if id, present := it.resource["id"]; present {
		s, ok := id.(string)
		if !ok || !idPattern.MatchString(s) {
			return nil, errorf("resource %d has an invalid id", i)
		}
		old = append(old, rt+"/"+s)
	}
	return old, nil
}

// rewrite replaces, anywhere inside v, a "reference" string member by what
// resolve makes of it. It reports false when resolve fails for one.
func rewrite(v any, resolve func(string) (string, bool)) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "reference" {
				n, ok := resolve(s)
				if !ok {
					return false
				}
				v[k] = n
				continue
			}
			if !rewrite(x, resolve) {
				return false
			}
		}
	case []any:
		for _, x := range v {
			if !rewrite(x, resolve) {
				return false
			}
		}
	}
	return true
}

// external reports whether ref is an absolute http(s) URL: a resource
// outside the document, which a reader may fetch.
func external(ref string) bool {
	u, err := url.Parse(ref)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
