package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/health-data-connect/hdc/internal/problem"
)

// MaxJSONBody caps the body of every JSON request except uploads, which have
// their own limit.
const MaxJSONBody = 64 << 10

// ErrInvalidJSON is wrapped by Unmarshal's errors for text that is not JSON
// or not of the expected types.
var ErrInvalidJSON = errors.New("invalid JSON")

// Unmarshal decodes the JSON object data into v, a pointer to a struct, more
// strictly than encoding/json: member names must equal a field's JSON name
// exactly (encoding/json folds case), no member may repeat (encoding/json
// keeps the last), unknown members and anything after the object are errors.
// Error messages name the struct's own members but never quote a value or
// a member name the client made up (it may be a secret sent by mistake).
func Unmarshal(data []byte, v any) error {
	known := fieldNames(reflect.TypeOf(v).Elem())
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("%w: the body must be a JSON object", ErrInvalidJSON)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return syntaxError(dec)
		}
		name := tok.(string) // inside an object, More means a member name follows
		switch {
		case !known[name]:
			return fmt.Errorf("unknown member; the members are %s", strings.Join(slices.Sorted(maps.Keys(known)), ", "))
		case seen[name]:
			return fmt.Errorf("member %s appears twice", quoteName(name))
		}
		seen[name] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return syntaxError(dec)
		}
	}
	if _, err := dec.Token(); err != nil {
		return syntaxError(dec)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: data after the JSON object", ErrInvalidJSON)
	}
	if err := json.Unmarshal(data, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%w: member %s has the wrong type", ErrInvalidJSON, quoteName(te.Field))
		}
		return fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	return nil
}

func syntaxError(dec *json.Decoder) error {
	return fmt.Errorf("%w at offset %d", ErrInvalidJSON, dec.InputOffset())
}

// quoteName quotes a member name of the target struct for an error message.
func quoteName(s string) string { return fmt.Sprintf("%q", s) }

var fieldCache sync.Map // reflect.Type → map[string]bool

// fieldNames returns the JSON member names of struct type t's fields.
func fieldNames(t reflect.Type) map[string]bool {
	if names, ok := fieldCache.Load(t); ok {
		return names.(map[string]bool)
	}
	names := map[string]bool{}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		names[name] = true
	}
	fieldCache.Store(t, names)
	return names
}

// DecodeRequest reads r's JSON body with ReadJSON into v with Unmarshal.
// It returns the problem to answer with when that fails.
func DecodeRequest(w http.ResponseWriter, r *http.Request, v any) *problem.Problem {
	data, p := ReadJSON(w, r)
	if p != nil {
		return p
	}
	if err := Unmarshal(data, v); err != nil {
		return DecodeProblem(err)
	}
	return nil
}

// ReadJSON returns r's JSON body, at most MaxJSONBody bytes, or the problem
// to answer with: 415 for another media type, 413 for a body too large.
func ReadJSON(w http.ResponseWriter, r *http.Request) ([]byte, *problem.Problem) {
	if p := requireJSON(r); p != nil {
		return nil, p
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxJSONBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, TooLarge(fmt.Sprintf("JSON bodies are limited to %d bytes", MaxJSONBody))
	case err != nil:
		return nil, BadRequest("the body could not be read")
	}
	return data, nil
}

// DecodeProblem is the 400 problem for an error of Unmarshal, or of
// validation after it: invalid_json when the text is not JSON of the right
// types, invalid_request otherwise.
func DecodeProblem(err error) *problem.Problem {
	if errors.Is(err, ErrInvalidJSON) {
		return problem.New(http.StatusBadRequest, problem.CodeInvalidJSON, err.Error())
	}
	return BadRequest(err.Error())
}

// requireJSON returns a 415 problem unless r's Content-Type is
// application/json (parameters such as charset=utf-8 are allowed).
func requireJSON(r *http.Request) *problem.Problem {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && mt == "application/json" {
		return nil
	}
	return problem.New(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMedia, "Content-Type must be application/json")
}
