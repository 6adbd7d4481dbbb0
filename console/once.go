package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/health-data-connect/hdc/backend/admin/adminclient"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Post/redirect/get: every form carries a one-time key (formKey), which
// the console sends as the Admin API's Idempotency-Key; the change answers
// 303 to a page that shows its result, and the session keeps the result
// under the key, so that the same form sent again (a double click, the
// back button) makes no second change and is sent to the same result. A
// new secret is kept for one view of its page, never in a URL or a
// cookie: reloading the page shows the result without it.
const (
	// secretLife is how long a new secret waits to be shown once.
	secretLife = 5 * time.Minute
	// changeTimeout bounds a change made for a form. The change goes on
	// when the browser leaves (a double click drops the first request),
	// so that the form sent again finds its result.
	changeTimeout = 2 * time.Minute
	// formKeyLen is the length of a formKey: rand.Text's, 128 random
	// bits in base32.
	formKeyLen = 26
	// maxOutcomes bounds the outcomes a session keeps: past it, the
	// oldest settled ones are forgotten, and their forms sent again would
	// make their changes again.
	maxOutcomes = 1000
)

// formKey returns a new one-time key for a form.
func formKey() string { return rand.Text() }

// validFormKey reports whether k has formKey's shape.
func validFormKey(k string) bool {
	if len(k) != formKeyLen {
		return false
	}
	for _, c := range []byte(k) {
		if (c < 'A' || c > 'Z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}

// outcome is what a form's change came to.
type outcome struct {
	hash [sha256.Size]byte // the form's path and fields
	done chan struct{}     // closed once the change answered
	// location is where the form's 303 sends, "" while the change is
	// under way; set before done closes, never after.
	location string
	once     *view // the page with the new secret, until shown or expired
	shown    view  // the page without it
	// file is the credentials file with the secret, until downloaded or
	// expired (nil then), and name its name; none for a result
	// without one.
	file []byte
	name string
}

// results are a session's outcomes by form key, kept for the session's
// life (the secrets they show, far less), the newest maxOutcomes of them.
type results struct {
	mu         sync.Mutex
	byKey      map[string]*outcome
	order      []string // the keys of byKey, oldest first
	secretLife time.Duration
}

func newResults(secretLife time.Duration) *results {
	return &results{byKey: map[string]*outcome{}, secretLife: secretLife}
}

// claim returns the outcome of the form key and whether it is new: the
// caller then makes the change and settles it.
func (rs *results) claim(key string, hash [sha256.Size]byte) (*outcome, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if o, ok := rs.byKey[key]; ok {
		return o, false
	}
	o := &outcome{hash: hash, done: make(chan struct{})}
	rs.byKey[key] = o
	rs.order = append(rs.order, key)
	rs.forgetOldest()
	return o, true
}

// forgetOldest drops the oldest settled outcomes past maxOutcomes, and
// the keys of outcomes already forgotten. One under way stays: a form
// sent again waits on it.
func (rs *results) forgetOldest() {
	kept := rs.order[:0]
	excess := len(rs.byKey) - maxOutcomes
	for _, k := range rs.order {
		o, ok := rs.byKey[k]
		if !ok {
			continue
		}
		if excess > 0 && o.location != "" {
			delete(rs.byKey, k)
			excess--
			continue
		}
		kept = append(kept, k)
	}
	rs.order = kept
}

// settle records the change v made for the form key: where its redirect
// sends, or its page, shown once at resultPath. A failed change is
// forgotten, so that the form may be sent again.
func (rs *results) settle(key string, o *outcome, v view, err error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	defer close(o.done)
	switch {
	case err != nil:
		delete(rs.byKey, key)
	case v.Redirect != "":
		o.location = v.Redirect
	default:
		v = o.keepFile(key, v)
		o.location, o.once, o.shown = resultPath(key), &v, withoutSecret(v)
		time.AfterFunc(rs.secretLife, func() {
			rs.mu.Lock()
			defer rs.mu.Unlock()
			o.once, o.file = nil, nil
		})
	}
}

// keepFile moves the credentials file of v, a secret's page, into o, to
// be downloaded once from the result of the form key, and returns v with
// the link to it.
func (o *outcome) keepFile(key string, v view) view {
	sv, ok := v.Data.(secretView)
	if !ok || sv.File == nil {
		return v
	}
	o.file, o.name = sv.File, sv.FileName
	sv.File, sv.Download = nil, resultPath(key)+"/credentials"
	v.Data = sv
	return v
}

// takeFile returns the credentials file of the form key's result, once:
// ok is false for no such result, file nil once downloaded or expired.
func (rs *results) takeFile(key string) (file []byte, name string, ok bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	o, ok := rs.byKey[key]
	if !ok || o.location == "" || o.name == "" {
		return nil, "", false
	}
	file, o.file = o.file, nil
	return file, o.name, true
}

// take returns the page of the form key's result: with its secret the
// first time, without it after, or once the secret expired.
func (rs *results) take(key string) (view, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	o, ok := rs.byKey[key]
	switch {
	case !ok || o.location == "":
		return view{}, false
	case o.once != nil:
		v := *o.once
		o.once = nil
		return v, true
	}
	return o.shown, true
}

// resultPath is the page of the form key's result.
func resultPath(key string) string { return "/results/" + url.PathEscape(key) }

// errNoResult answers a result that is not this session's.
var errNoResult = problem.New(http.StatusNotFound, problem.CodeNotFound,
	"This session has no such result: the console keeps a form's result for its session only.")

// resultPage shows the result of the form key of the path, once with its
// secret.
func (s *Server) resultPage(r *http.Request) (view, error) {
	v, ok := sessionOf(r).results.take(r.PathValue("key"))
	if !ok {
		return view{}, errNoResult
	}
	return v, nil
}

// formHash tells two forms sent under one key apart: the path and the
// fields.
func formHash(r *http.Request) [sha256.Size]byte {
	return sha256.Sum256([]byte(r.URL.Path + "?" + r.PostForm.Encode()))
}

// The refusals of a form's key.
var (
	errNoFormKey = problem.New(http.StatusBadRequest, problem.CodeInvalidRequest,
		"The form carries no one-time key: reload its page and send it again.")
	errFormKeyReused = problem.New(http.StatusUnprocessableEntity, problem.CodeIdempotencyKeyReused,
		"This form was sent already with other values: reload its page for a new form.")
)

// once makes the change of the form key with fn once, and answers 303 to
// its result; the same form sent again waits for the first and is sent
// to the same result.
func (s *Server) once(w http.ResponseWriter, r *http.Request, key string, fn changeFunc) {
	res, hash := sessionOf(r).results, formHash(r)
	for {
		o, first := res.claim(key, hash)
		if first {
			s.makeChange(w, r, key, o, fn)
			return
		}
		if o.hash != hash {
			s.showError(w, errFormKeyReused)
			return
		}
		select {
		case <-o.done:
		case <-r.Context().Done():
			return
		}
		if o.location != "" {
			http.Redirect(w, r, o.location, http.StatusSeeOther)
			return
		}
		// The first sending failed and was forgotten: this one tries.
	}
}

// makeChange makes fn's change for the form key, settles o with it and
// answers.
func (s *Server) makeChange(w http.ResponseWriter, r *http.Request, key string, o *outcome, fn changeFunc) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), changeTimeout)
	defer cancel()
	v, err := fn(r.WithContext(adminclient.WithIdempotencyKey(ctx, key)))
	sessionOf(r).results.settle(key, o, v, err)
	if err != nil {
		s.show(w, r, v, err)
		return
	}
	http.Redirect(w, r, o.location, http.StatusSeeOther)
}
