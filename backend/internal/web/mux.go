package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/health-data-connect/hdc/internal/problem"
)

// Mux routes with http.ServeMux patterns and answers in problem details
// where ServeMux would answer in plain text: 404 for an unknown path, 405
// with an Allow header for a known path and another method.
type Mux struct {
	mux     *http.ServeMux
	methods map[string][]string // path pattern → methods registered for it
}

// NewMux returns an empty Mux.
func NewMux() *Mux {
	m := &Mux{mux: http.NewServeMux(), methods: map[string][]string{}}
	m.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		problem.Write(w, problem.New(http.StatusNotFound, problem.CodeNotFound, "no such route"))
	})
	return m
}

// Handle routes method requests for path (a ServeMux path pattern) to h.
func (m *Mux) Handle(method, path string, h http.Handler) {
	m.mux.Handle(method+" "+path, h)
	if _, ok := m.methods[path]; !ok {
		m.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			allowed := slices.Clone(m.methods[path])
			if slices.Contains(allowed, http.MethodGet) {
				allowed = append(allowed, http.MethodHead)
			}
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			problem.Write(w, problem.New(http.StatusMethodNotAllowed, problem.CodeMethodNotAllowed,
				"the route does not allow this method; see the Allow header"))
		})
	}
	m.methods[path] = append(m.methods[path], method)
}

// Pattern returns the pattern of the route r takes, "" when none does;
// unknown paths take "/".
func (m *Mux) Pattern(r *http.Request) string {
	_, p := m.mux.Handler(r)
	return p
}

// ServeHTTP implements http.Handler.
func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.mux.ServeHTTP(w, r) }
