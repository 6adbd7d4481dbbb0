package console

import (
	"bytes"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/internal/problem"
)

// view is what a page shows: its template, title and data, and what the
// page guard adds (the person, whether the person may change anything, the
// CSRF token of the forms, whether the page is served in a session). A
// page or a change may answer a Redirect instead.
type view struct {
	Template string
	Title    string
	Nav      string
	Data     any
	Redirect string

	Me        adminapi.Person
	CanChange bool
	CSRF      string
	// Session is set on the pages of a session: only there do the
	// console's links answer, so only there does the layout show them.
	Session bool
}

// pageFunc makes a page's view; an error is shown as a problem page.
type pageFunc func(r *http.Request) (view, error)

// changeFunc makes a change through the API and returns the redirect to
// its result, or the page that shows its new secret once.
type changeFunc func(r *http.Request) (view, error)

// errNoPage answers a path the console does not serve.
var errNoPage = problem.New(http.StatusNotFound, problem.CodeNotFound, "The console has no such page.")

// invalid is a 400 problem of the console's own reading of a form or query.
func invalid(detail string) error {
	return problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, detail)
}

// page serves fn's view with the person and the session's CSRF token.
func (s *Server) page(fn pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := fn(r)
		if err == nil && v.Redirect != "" {
			http.Redirect(w, r, v.Redirect, http.StatusSeeOther)
			return
		}
		s.show(w, r, v, err)
	})
}

// change serves a change: refused 403 without the session's CSRF token,
// 400 without the form's one-time key, then made once per key by fn
// through the API, which refuses an auditor (once).
func (s *Server) change(fn changeFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if !checkCSRF(r) {
			s.pages.problemFor(w, http.StatusForbidden, "The form's CSRF token is missing or not this session's: reload the page and try again.", s.known())
			return
		}
		key := r.PostFormValue("once")
		if !validFormKey(key) {
			s.showError(w, errNoFormKey)
			return
		}
		s.once(w, r, key, fn)
	})
}

// show renders v, or err as a problem page.
func (s *Server) show(w http.ResponseWriter, r *http.Request, v view, err error) {
	me, meErr := s.whoami(r)
	if err == nil {
		err = meErr
	}
	if err != nil {
		s.showError(w, err)
		return
	}
	v.Me, v.CanChange, v.CSRF, v.Session = me, me.Role == "operator", sessionOf(r).csrf, true
	s.pages.render(w, http.StatusOK, v)
}

// showError renders err as a problem page: the API's problem with its
// status, or 502 naming what the API's client tried when no backend
// answered. The page still says who is signed in, when the API said so
// once.
func (s *Server) showError(w http.ResponseWriter, err error) {
	var p *problem.Problem
	if errors.As(err, &p) {
		s.pages.problemFor(w, p.Status, p.Detail, s.known())
		return
	}
	s.log.Warn("console: the Admin API", zap.Error(err))
	s.pages.problemFor(w, http.StatusBadGateway, "The Admin API did not answer: "+err.Error()+
		". The console shows this page again once a backend answers.", s.known())
}

// known returns the person whoami answered once, or none, without asking.
func (s *Server) known() adminapi.Person {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.me == nil {
		return adminapi.Person{}
	}
	return *s.me
}

// whoami returns the person the API takes the certificate for, asked
// once.
func (s *Server) whoami(r *http.Request) (adminapi.Person, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.me != nil {
		return *s.me, nil
	}
	me, err := s.api.Whoami(r.Context())
	if err != nil {
		return me, err
	}
	s.me = &me
	return me, nil
}

// pages are the parsed templates, one set per page over the layout.
type pages struct {
	byName map[string]*template.Template
}

// mustParsePages parses the embedded templates; a template that does not
// parse is a bug of the build.
func mustParsePages() *pages {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, n := range names {
		base := path.Base(n)
		if base == "layout.html" {
			continue
		}
		t := template.New("layout.html").Funcs(funcs)
		p.byName[strings.TrimSuffix(base, ".html")] = template.Must(t.ParseFS(templateFS, "templates/layout.html", n))
	}
	return p
}

// render writes v's page with status.
func (p *pages) render(w http.ResponseWriter, status int, v view) {
	t, ok := p.byName[v.Template]
	if !ok {
		panic("console: no template " + v.Template)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		http.Error(w, "the page did not render", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// problem renders the problem page of a request outside a session (no
// session, a foreign Host): status and detail, as RFC 9457 names them,
// and no link, as none of the console's pages would answer.
func (p *pages) problem(w http.ResponseWriter, status int, detail string) {
	p.render(w, status, problemView(status, detail))
}

// problemFor renders the problem page of a session's request, with the
// console's links, that says me is signed in, unless me is none.
func (p *pages) problemFor(w http.ResponseWriter, status int, detail string, me adminapi.Person) {
	v := problemView(status, detail)
	v.Me, v.Session = me, true
	p.render(w, status, v)
}

// problemView is the problem page of status and detail.
func problemView(status int, detail string) view {
	return view{Template: "problem", Title: http.StatusText(status), Data: struct {
		Status int
		Detail string
	}{status, detail}}
}
