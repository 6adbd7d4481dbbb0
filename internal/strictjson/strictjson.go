// Package strictjson decodes JSON more strictly than encoding/json, for
// input a stranger or a hand wrote: request bodies and the key registry
// file. At every depth, a member name must equal a field's JSON name
// exactly (encoding/json folds case, so "Status" would set status), no
// object may repeat a member (encoding/json keeps the last, so a second
// "secret" would replace the first), unknown members are errors, and
// nothing may follow the value.
//
// It is hand-written because encoding/json/v2, which refuses duplicates and
// matches names exactly, is an experiment in Go 1.26. It only checks: the
// decoding itself is encoding/json's, after the check.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// ErrSyntax is wrapped by the errors for text that is not JSON, or not of
// the expected types.
var ErrSyntax = errors.New("invalid JSON")

// maxDepth bounds the nesting the check follows.
const maxDepth = 64

// Unmarshal checks data against the shape of v, a pointer to a struct, and
// decodes it into v with encoding/json. Errors name members of the struct
// but never quote a value or a name the input made up (it may be a secret
// sent by mistake).
func Unmarshal(data []byte, v any) error {
	t := reflect.TypeOf(v)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return errors.New("strictjson: v must point to a struct")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	c := checker{dec: dec}
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return fmt.Errorf("%w: the document must be a JSON object", ErrSyntax)
	}
	if err := c.object(t.Elem(), "", 1); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: data after the JSON object", ErrSyntax)
	}
	if err := json.Unmarshal(data, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%w: member %q has the wrong type", ErrSyntax, te.Field)
		}
		return fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	return nil
}

// checker walks the tokens of a document along the type it decodes into.
type checker struct{ dec *json.Decoder }

func (c *checker) syntax() error {
	return fmt.Errorf("%w at offset %d", ErrSyntax, c.dec.InputOffset())
}

// value checks the next value for type t (nil: any JSON). at names the
// member for errors.
func (c *checker) value(t reflect.Type, at string, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: nested too deep", ErrSyntax)
	}
	tok, err := c.dec.Token()
	if err != nil {
		return c.syntax()
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch tok {
	case json.Delim('{'):
		if t != nil && t.Kind() == reflect.Struct && !opaque(t) {
			return c.object(t, at, depth+1)
		}
		return c.anyObject(elem(t), at, depth+1)
	case json.Delim('['):
		for c.dec.More() {
			if err := c.value(elem(t), at, depth+1); err != nil {
				return err
			}
		}
		if _, err := c.dec.Token(); err != nil {
			return c.syntax()
		}
	}
	return nil
}

// object checks the members of an object for struct type t, whose opening
// brace has been read.
func (c *checker) object(t reflect.Type, at string, depth int) error {
	fields := fieldsOf(t)
	seen := map[string]bool{}
	for c.dec.More() {
		tok, err := c.dec.Token()
		if err != nil {
			return c.syntax()
		}
		name := tok.(string) // inside an object, More means a member name follows
		f, known := fields[name]
		switch {
		case !known:
			return fmt.Errorf("unknown member%s; the members are %s", where(at), strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
		case seen[name]:
			return fmt.Errorf("member %q appears twice%s", name, where(at))
		}
		seen[name] = true
		if err := c.value(f, join(at, name), depth); err != nil {
			return err
		}
	}
	if _, err := c.dec.Token(); err != nil {
		return c.syntax()
	}
	return nil
}

// anyObject checks an object that is not a struct's (a map, a raw message,
// any JSON) for repeated members, with values of type t.
func (c *checker) anyObject(t reflect.Type, at string, depth int) error {
	seen := map[string]bool{}
	for c.dec.More() {
		tok, err := c.dec.Token()
		if err != nil {
			return c.syntax()
		}
		name := tok.(string)
		if seen[name] {
			return fmt.Errorf("a member appears twice%s", where(at))
		}
		seen[name] = true
		if err := c.value(t, at, depth); err != nil {
			return err
		}
	}
	if _, err := c.dec.Token(); err != nil {
		return c.syntax()
	}
	return nil
}

// elem is the type of the elements of a slice, array or map type t, nil
// for any other.
func elem(t reflect.Type) reflect.Type {
	if t == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return t.Elem()
	}
	return nil
}

var (
	rawMessage  = reflect.TypeFor[json.RawMessage]()
	unmarshaler = reflect.TypeFor[json.Unmarshaler]()
)

// opaque reports whether a struct type decodes itself (time.Time, say):
// its object has no fields to match.
func opaque(t reflect.Type) bool {
	return t == rawMessage || reflect.PointerTo(t).Implements(unmarshaler)
}

func where(at string) string {
	if at == "" {
		return ""
	}
	return " in " + at
}

func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// fieldsOf returns the JSON member names of struct type t's fields, with
// their types; an embedded struct's fields are t's.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	fields := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			maps.Copy(fields, fieldsOf(f.Type)) // promoted, as encoding/json promotes them
			continue
		}
		if !f.IsExported() {
			continue
		}
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		fields[name] = f.Type
	}
	fieldCache.Store(t, fields)
	return fields
}
