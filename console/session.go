package console

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"net/http"
	"sync"
	"time"
)

// cookieName is the session cookie's name.
const cookieName = "hdc_console"

// sessionLife is how long a session lasts after the browser was admitted.
const sessionLife = 12 * time.Hour

// Token returns a new one-time token for New: 256 random bits, base32.
func Token() string { return rand.Text() + rand.Text() }

// session is a browser admitted by the token: its CSRF token, when it
// ends, and the results of its forms.
type session struct {
	csrf    string
	expires time.Time
	results *results
}

// sessions are the browsers admitted; the one-time token admits one.
type sessions struct {
	mu    sync.Mutex
	token string // "" once used
	byID  map[string]session
	now   func() time.Time
	// secretLife is how long a new secret waits to be shown once.
	secretLife time.Duration
}

func newSessions(token string) *sessions {
	return &sessions{token: token, byID: map[string]session{}, now: time.Now, secretLife: secretLife}
}

// admit exchanges the one-time token for a new session's id, once: false
// for a wrong or spent token.
func (ss *sessions) admit(token string) (string, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(ss.token)) != 1 {
		return "", false
	}
	ss.token = ""
	id := rand.Text() + rand.Text()
	ss.byID[id] = session{csrf: rand.Text() + rand.Text(), expires: ss.now().Add(sessionLife), results: newResults(ss.secretLife)}
	return id, true
}

// get returns the session of id while it lasts.
func (ss *sessions) get(id string) (session, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.byID[id]
	if ok && !ss.now().Before(s.expires) {
		delete(ss.byID, id)
		return session{}, false
	}
	return s, ok
}

// login exchanges the one-time token of the URL hdc console printed for a
// session cookie, and sends the browser to the fleet.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	id, ok := s.sessions.admit(r.URL.Query().Get("token"))
	if !ok {
		s.pages.problem(w, http.StatusUnauthorized, "This login URL is not valid, or was used already: it signs in one browser once. "+signInAgain)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: int(sessionLife / time.Second)})
	http.Redirect(w, r, "/fleet", http.StatusSeeOther)
}

// signInAgain tells a browser without a session how to get one: the
// login URL's token admits one browser once, and only a new hdc console
// prints another.
const signInAgain = "To sign in, stop hdc console (Ctrl-C) and run it again: it prints a new login URL to open once."

type sessionKey struct{}

// session admits a request of a session's browser, and refuses the others
// 401.
func (s *Server) session(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(cookieName)
		var sess session
		ok := err == nil
		if ok {
			sess, ok = s.sessions.get(c.Value)
		}
		if !ok {
			s.pages.problem(w, http.StatusUnauthorized, "This browser has no session of this console: none yet, or it ended "+
				"(a session lasts 12 hours, and ends when hdc console stops). "+signInAgain)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, sess)))
	})
}

// sessionOf returns the session of a request the session check admitted.
func sessionOf(r *http.Request) session {
	s, _ := r.Context().Value(sessionKey{}).(session)
	return s
}

// checkCSRF reports whether the form of r carries its session's CSRF
// token. net/http's CrossOriginProtection, in front, already refuses a
// change another origin's page sends (by Sec-Fetch-Site or Origin); the
// token adds a check of our own for a browser that sends neither header.
func checkCSRF(r *http.Request) bool {
	want := sessionOf(r).csrf
	got := r.PostFormValue("csrf")
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
