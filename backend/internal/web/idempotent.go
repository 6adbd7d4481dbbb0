package web

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Idempotency-Key (draft-ietf-httpapi-idempotency-key-header): a change
// sent with a key is made once; the same request with the same key, by the
// same owner (a person of the Admin API, a client of the public API),
// within IdempotencyTTL is answered as the first was, with
// Idempotent-Replayed: true. The answer is kept sealed (it may hold a
// secret shown once). Written here because the draft is a header and a
// store, and no library keeps its answers in our store, sealed, per owner.
const (
	HeaderIdempotencyKey = contract.HeaderIdempotencyKey
	HeaderReplayed       = "Idempotent-Replayed"
	IdempotencyTTL       = 24 * time.Hour
	maxIdempotencyKey    = 255
)

// The refusals of an Idempotency-Key.
var (
	errKeySyntax = problem.New(http.StatusBadRequest, problem.CodeInvalidRequest,
		"Idempotency-Key must be given once, 1 to 255 visible ASCII characters (a UUID, say)")
	errKeyReused = problem.New(http.StatusUnprocessableEntity, problem.CodeIdempotencyKeyReused,
		"this Idempotency-Key was used for another request: use a new key for a new request")
	errKeyInUse = problem.New(http.StatusConflict, problem.CodeIdempotencyKeyInUse,
		"the first request with this Idempotency-Key is still under way: try again")
)

// Idempotent serves the changes of a set of routes under their
// Idempotency-Key.
type Idempotent struct {
	// Store keeps the claims of keys and their answers.
	Store store.Idempotency
	// Problems answers a failure of Store.
	Problems *Problems
	// Owner names the caller whose keys a request's is (the key's
	// IdempotencyKey.Person); two owners' keys never meet.
	Owner func(*http.Request) string
}

// Wrap serves next once per Idempotency-Key of the caller, and answers the
// same request again with the first answer; a request without a key is
// served as it is. A request with a key and no body (no Content-Type
// either) is one with an empty body.
func (h Idempotent) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys := r.Header.Values(HeaderIdempotencyKey)
		if len(keys) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		if len(keys) > 1 || !validKey(keys[0]) {
			problem.Write(w, errKeySyntax)
			return
		}
		var body []byte
		if r.ContentLength != 0 || r.Header.Get("Content-Type") != "" {
			var p *problem.Problem
			if body, p = ReadJSON(w, r); p != nil {
				problem.Write(w, p)
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		k := store.IdempotencyKey{Person: h.Owner(r), Key: keys[0]}
		h.once(w, r, k, requestHash(r, body), next)
	})
}

// once serves r under the claim k, or answers with what holds it.
func (h Idempotent) once(w http.ResponseWriter, r *http.Request, k store.IdempotencyKey, hash []byte, next http.Handler) {
	now := time.Now()
	held, began, err := h.Store.BeginIdempotent(r.Context(), k, hash, now, now.Add(-IdempotencyTTL))
	switch {
	case err != nil:
		h.Problems.Handler("idempotency", func(http.ResponseWriter, *http.Request) error { return err }).ServeHTTP(w, r)
	case !began && !bytes.Equal(held.Hash, hash):
		problem.Write(w, errKeyReused)
	case !began && held.Status == 0:
		w.Header().Set("Retry-After", "1")
		problem.Write(w, errKeyInUse)
	case !began:
		w.Header().Set(HeaderReplayed, "true")
		writeKept(w, held.Status, held.Body)
	default:
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		h.keep(r, k, rec)
	}
}

// keep stores the answer rec recorded under k; one that is the server's
// failure is not kept, and the key is free again.
func (h Idempotent) keep(r *http.Request, k store.IdempotencyKey, rec *recorder) {
	ctx := r.Context()
	var err error
	if rec.status >= 500 || rec.status == 0 {
		err = h.Store.AbandonIdempotent(ctx, k)
	} else {
		err = h.Store.FinishIdempotent(ctx, k, rec.status, rec.body.Bytes())
	}
	if err != nil {
		h.Problems.Log.Error("keeping the answer of an Idempotency-Key failed; a repeat may be refused as under way until the key expires")
	}
}

// writeKept answers with a kept answer: JSON, a problem's when it was
// one.
func writeKept(w http.ResponseWriter, status int, body []byte) {
	ct := "application/json"
	if status >= 400 {
		ct = problem.ContentType
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// requestHash is what tells two requests under one key apart: the method,
// the path and query, and the body.
func requestHash(r *http.Request, body []byte) []byte {
	h := sha256.New()
	io.WriteString(h, r.Method+" "+r.URL.RequestURI()+"\n")
	h.Write(body)
	return h.Sum(nil)
}

// validKey reports whether k is an Idempotency-Key this API takes.
func validKey(k string) bool {
	if len(k) == 0 || len(k) > maxIdempotencyKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// recorder passes an answer on and keeps a copy of it.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	rec.body.Write(b)
	return rec.ResponseWriter.Write(b)
}
