// Package fhirtest checks FHIR R4 document Bundles in tests, the way
// httptest helps test HTTP: CheckDocument applies the Bundle and
// Composition invariants a document must satisfy (bdl-1 to bdl-4, bdl-7,
// bdl-9, bdl-10, bdl-11, cmp-1, the Composition's required elements) and
// the rules this project adds (urn:uuid fullUrls equal to resource ids,
// subject, authors, section entries and every urn:uuid or relative
// reference resolve inside the Bundle, a meta with versionId, lastUpdated,
// the DocumentBundle profile and the confidentiality label, a self link).
package fhirtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

var (
	instantPattern  = regexp.MustCompile(`^([0-9]{4})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?(Z|[+-]((0[0-9]|1[0-3]):[0-5][0-9]|14:00))$`)
	dateTimePattern = regexp.MustCompile(`^([0-9]([0-9]([0-9][1-9]|[1-9]0)|[1-9]00)|[1-9]000)(-(0[1-9]|1[0-2])(-(0[1-9]|[1-2][0-9]|3[0-1])(T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?(Z|(\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00)))?)?)?$`)
	idPattern       = regexp.MustCompile(`^[A-Za-z0-9\-.]{1,64}$`)
	uuidURN         = regexp.MustCompile(`^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// Result is a checked document, for further assertions.
type Result struct {
	// Bundle is the whole document.
	Bundle map[string]any
	// Composition is the first entry's resource.
	Composition map[string]any
	// Entries maps each fullUrl to its resource.
	Entries map[string]map[string]any
}

// CheckDocument parses data as a FHIR document Bundle and returns every rule
// it breaks, joined, or nil.
func CheckDocument(data []byte) (*Result, error) {
	var b map[string]any
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	c := &checker{res: &Result{Bundle: b, Entries: map[string]map[string]any{}}}
	c.bundle(b)
	return c.res, errors.Join(c.errs...)
}

type checker struct {
	res  *Result
	errs []error
}

func (c *checker) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func list(v any) []any         { l, _ := v.([]any); return l }
func str(v any) string         { s, _ := v.(string); return s }
func path(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		v = obj(v)[k]
	}
	return v
}

func (c *checker) bundle(b map[string]any) {
	c.bundleHeader(b)
	entries := list(b["entry"])
	if len(entries) == 0 {
		c.fail("bdl-11: a document must have a Composition as the first resource; there are no entries")
		return
	}
	for i, e := range entries {
		c.entry(i, obj(e))
	}
	comp := obj(obj(entries[0])["resource"])
	if comp["resourceType"] != "Composition" {
		c.fail("bdl-11: the first resource is a %v, not a Composition", comp["resourceType"])
		return
	}
	c.res.Composition = comp
	c.composition(comp)
	// Every reference anywhere that is meant to resolve inside the Bundle
	// (urn:uuid, or relative such as Type/id: the document has no base URL
	// to resolve it against) is an entry's fullUrl.
	for i, e := range entries {
		walkReferences(obj(e)["resource"], func(ref string) {
			if _, ok := c.res.Entries[ref]; !ok && internalReference(ref) {
				c.fail("entry %d references %q, which is not an entry fullUrl", i, ref)
			}
		})
	}
}

// bundleHeader checks the Bundle's own members: type, id, identifier,
// timestamp, meta and link.
func (c *checker) bundleHeader(b map[string]any) {
	if b["resourceType"] != "Bundle" || b["type"] != "document" {
		c.fail("not a Bundle of type document: %v %v", b["resourceType"], b["type"])
	}
	if !idPattern.MatchString(str(b["id"])) {
		c.fail("Bundle.id %q is not a valid id", b["id"])
	}
	// bdl-9
	if str(path(b, "identifier", "system")) == "" || str(path(b, "identifier", "value")) == "" {
		c.fail("bdl-9: a document must have an identifier with a system and a value")
	}
	// bdl-10
	if !instantPattern.MatchString(str(b["timestamp"])) {
		c.fail("bdl-10: a document must have a timestamp (an instant), got %q", b["timestamp"])
	}
	// bdl-1
	if _, ok := b["total"]; ok {
		c.fail("bdl-1: total only when a search or history")
	}
	meta := obj(b["meta"])
	if str(meta["versionId"]) == "" || !instantPattern.MatchString(str(meta["lastUpdated"])) {
		c.fail("meta needs versionId and an instant lastUpdated: %v", meta)
	}
	if !slices.Contains(list(meta["profile"]), any("https://nrces.in/ndhm/fhir/r4/StructureDefinition/DocumentBundle")) {
		c.fail("meta.profile lacks the DocumentBundle profile")
	}
	if !anyMember(list(meta["security"]), func(s map[string]any) bool {
		return s["system"] == "http://terminology.hl7.org/CodeSystem/v3-Confidentiality" && s["code"] == "V" && str(s["display"]) != ""
	}) {
		c.fail("meta.security lacks the confidentiality label V")
	}
	if !anyMember(list(b["link"]), func(l map[string]any) bool { return l["relation"] == "self" && str(l["url"]) != "" }) {
		c.fail("link lacks relation self")
	}
}

// anyMember reports whether an object of l satisfies ok.
func anyMember(l []any, ok func(map[string]any) bool) bool {
	return slices.ContainsFunc(l, func(v any) bool { return ok(obj(v)) })
}

func (c *checker) entry(i int, e map[string]any) {
	for _, k := range []string{"search", "request", "response"} {
		if _, ok := e[k]; ok {
			c.fail("bdl-2/3/4: entry %d of a document has %s", i, k)
		}
	}
	full := str(e["fullUrl"])
	res := obj(e["resource"])
	switch {
	case res == nil:
		c.fail("entry %d has no resource", i)
		return
	case !uuidURN.MatchString(full):
		c.fail("entry %d fullUrl %q is not a urn:uuid", i, full)
	case strings.TrimPrefix(full, "urn:uuid:") != str(res["id"]):
		c.fail("entry %d fullUrl %q does not carry the resource id %q", i, full, res["id"])
	}
	// bdl-7
	if _, dup := c.res.Entries[full]; dup {
		c.fail("bdl-7: fullUrl %q appears twice", full)
	}
	c.res.Entries[full] = res
	if str(res["resourceType"]) == "" {
		c.fail("entry %d resource has no resourceType", i)
	}
}

func (c *checker) composition(comp map[string]any) {
	switch comp["status"] {
	case "preliminary", "final", "amended", "entered-in-error":
	default:
		c.fail("Composition.status %q is not a document status", comp["status"])
	}
	if t := obj(comp["type"]); str(t["text"]) == "" && len(list(t["coding"])) == 0 {
		c.fail("Composition.type is required")
	}
	if !dateTimePattern.MatchString(str(comp["date"])) {
		c.fail("Composition.date %q is not a dateTime", comp["date"])
	}
	if len(list(comp["author"])) == 0 {
		c.fail("Composition.author is required")
	}
	if str(comp["title"]) == "" {
		c.fail("Composition.title is required")
	}
	refs := []any{comp["subject"]}
	refs = append(refs, list(comp["author"])...)
	for _, r := range refs {
		if _, ok := c.res.Entries[str(obj(r)["reference"])]; !ok {
			c.fail("Composition subject or author %v is not an entry of the Bundle", r)
		}
	}
	if str(path(comp, "identifier", "system")) == "" || str(path(comp, "identifier", "value")) == "" {
		c.fail("Composition.identifier is missing")
	}
	if !instantPattern.MatchString(str(path(comp, "meta", "lastUpdated"))) {
		c.fail("Composition.meta.lastUpdated is missing")
	}
	if !anyMember(list(comp["extension"]), func(x map[string]any) bool { return str(x["url"]) != "" && str(x["valueString"]) != "" }) {
		c.fail("Composition.extension lacks the care context id")
	}
	c.sections(list(comp["section"]))
}

// sections checks the Composition's sections: there are some, each has
// entries (cmp-1, made stricter), and every entry is in the Bundle.
func (c *checker) sections(sections []any) {
	if len(sections) == 0 {
		c.fail("Composition has no section")
	}
	for i, s := range sections {
		s := obj(s)
		if len(list(s["entry"])) == 0 {
			c.fail("cmp-1: section %d has no entry", i)
		}
		for _, e := range list(s["entry"]) {
			ref := str(obj(e)["reference"])
			if _, ok := c.res.Entries[ref]; !ok {
				c.fail("section %d references %q, which is not an entry fullUrl", i, ref)
			}
		}
	}
}

// internalReference reports whether ref must name an entry of the Bundle:
// a urn:uuid or a relative reference. Absolute URLs of other schemes point
// outside the document, and "#id" at a contained resource.
func internalReference(ref string) bool {
	if strings.HasPrefix(ref, "urn:uuid:") {
		return true
	}
	u, err := url.Parse(ref)
	return err != nil || u.Scheme == "" && !strings.HasPrefix(ref, "#")
}

// walkReferences calls fn with every "reference" string inside v.
func walkReferences(v any, fn func(string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "reference" {
				fn(s)
				continue
			}
			walkReferences(x, fn)
		}
	case []any:
		for _, x := range v {
			walkReferences(x, fn)
		}
	}
}
