package adminclient

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/internal/contract"
)

// hit is a request as the recording server saw it: the operation whose
// route it matched, the path's parameters, the query, the body, the key.
type hit struct {
	op     string
	params []string
	query  url.Values
	body   string
	key    string
}

// recorder serves every route of the table, answering {} and recording
// each request.
type recorder struct {
	mu   sync.Mutex
	hits []hit
}

// wildcard finds a path pattern's wildcards.
var wildcard = regexp.MustCompile(`\{([a-z_]+)\}`)

func (rec *recorder) handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range adminapi.Routes() {
		mux.HandleFunc(rt.Pattern(), func(w http.ResponseWriter, r *http.Request) {
			h := hit{op: rt.Name, query: r.URL.Query(), key: r.Header.Get(contract.HeaderIdempotencyKey)}
			for _, m := range wildcard.FindAllStringSubmatch(rt.Path, -1) {
				h.params = append(h.params, r.PathValue(m[1]))
			}
			b, _ := io.ReadAll(r.Body)
			h.body = string(b)
			rec.mu.Lock()
			rec.hits = append(rec.hits, h)
			rec.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("{}"))
		})
	}
	return mux
}

// last returns the last request recorded, and how many were.
func (rec *recorder) last() (hit, int) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.hits) == 0 {
		return hit{}, 0
	}
	return rec.hits[len(rec.hits)-1], len(rec.hits)
}

// argsOf returns arguments for a method of adminapi.API of type m: ctx,
// then a string for each id (each needing escaping, so that the test
// sees it escaped once), a query whose cursor is set, a body, a time, a
// writer. It returns the strings in order too.
func argsOf(ctx context.Context, m reflect.Type) (args []reflect.Value, ids []string) {
	args = []reflect.Value{reflect.ValueOf(ctx)}
	for i := 1; i < m.NumIn(); i++ {
		switch in := m.In(i); {
		case in.Kind() == reflect.String:
			id := "id/" + strconv.Itoa(i) + "?#%"
			ids = append(ids, id)
			args = append(args, reflect.ValueOf(id))
		case in == reflect.TypeFor[time.Time]():
			args = append(args, reflect.ValueOf(time.Date(2026, 3, 15, 14, 2, 0, 0, time.UTC)))
		case in == reflect.TypeFor[io.Writer]():
			args = append(args, reflect.ValueOf(io.Discard))
		default:
			v := reflect.New(in).Elem()
			if f := v.FieldByName("Cursor"); f.IsValid() {
				f.SetString("c-1")
			}
			args = append(args, v)
		}
	}
	return args, ids
}

// TestEveryOperationHitsItsRoute calls every operation of the client
// against a server of every route: each request matches its operation's
// route (method and path), with its ids in the path's wildcards, in
// order, escaped once (the ids the path has no wildcard for in the body);
// a query's parameters; and the caller's Idempotency-Key (a console
// form's, WithIdempotencyKey) exactly when the route takes one: every
// change.
func TestEveryOperationHitsItsRoute(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv := httptest.NewTLSServer(rec.handler())
	defer srv.Close()
	c, err := New([]string{srv.URL}, srv.Client().Transport.(*http.Transport).TLSClientConfig, 0)
	if err != nil {
		t.Fatal(err)
	}
	api := reflect.TypeFor[adminapi.API]()
	client := reflect.ValueOf(c)
	for i := range api.NumMethod() {
		m := api.Method(i)
		rt, _ := adminapi.Lookup(m.Name)
		formKey := "form-key-of-" + m.Name
		args, ids := argsOf(WithIdempotencyKey(t.Context(), formKey), m.Type)
		out := client.MethodByName(m.Name).Call(args)
		if err, _ := out[len(out)-1].Interface().(error); err != nil {
			t.Errorf("%s: %v", m.Name, err)
			continue
		}
		h, n := rec.last()
		inPath := min(len(ids), len(wildcard.FindAllString(rt.Path, -1)))
		switch {
		case n != i+1:
			t.Errorf("%s: %d requests in all, want %d", m.Name, n, i+1)
		case h.op != m.Name:
			t.Errorf("%s: the request matched the route of %s", m.Name, h.op)
		case !slices.Equal(h.params, ids[:inPath]):
			t.Errorf("%s: the path's parameters %q, want %q", m.Name, h.params, ids[:inPath])
		case rt.Idempotent && h.key != formKey || !rt.Idempotent && h.key != "":
			t.Errorf("%s: Idempotency-Key %q; the route takes one: %v", m.Name, h.key, rt.Idempotent)
		case rt.Method != "GET" && !rt.Idempotent:
			t.Errorf("%s: a change whose route takes no Idempotency-Key: the form's key does not reach the API", m.Name)
		}
		for _, id := range ids[inPath:] {
			if b, _ := json.Marshal(id); !strings.Contains(h.body, string(b)) {
				t.Errorf("%s: the body %s does not hold %s", m.Name, h.body, b)
			}
		}
		if takesQuery(m.Type) && h.query.Get("cursor") != "c-1" {
			t.Errorf("%s: the query %q lost the cursor", m.Name, h.query)
		}
	}
}

// takesQuery reports whether a method of type m takes a query: a struct
// with a cursor.
func takesQuery(m reflect.Type) bool {
	for i := 1; i < m.NumIn(); i++ {
		if in := m.In(i); in.Kind() == reflect.Struct {
			if _, ok := in.FieldByName("Cursor"); ok {
				return true
			}
		}
	}
	return false
}
