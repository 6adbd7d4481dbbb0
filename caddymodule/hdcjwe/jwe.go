// Package hdcjwe is the hdc_jwe handler: a request decrypted from its JWE
// envelope (jwe.go; decrypt.go reads the envelope into a spool, looks its
// key up in the hdc app's keys and opens it, the app checking its
// freshness), its answer encrypted under the same key (encrypter.go),
// the handler's own answers (problems.go) and its Caddyfile directive
// (caddyfile.go). The wire format is package internal/jwe.
package hdcjwe

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/caddymodule/edge"
	"github.com/health-data-connect/hdc/caddymodule/spool"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

func init() {
	caddy.RegisterModule(JWE{})
}

// JWE is the hdc_jwe handler: it decrypts JWE request bodies, forwards
// the plaintext JSON, and encrypts the response with the same key.
//
// A request opts in with "X-Encryption: JWE". Its body is a flattened JWE
// (application/json) or a compact one (application/jose), naming the key by
// kid; the key must belong to the client the bearer token names (set by
// hdc_auth before this handler), or, on the login route, to the client_id
// inside the decrypted body. A request without a body asks for an encrypted
// response with "X-Encryption-Kid". Every failure that involves a key gives
// the same answer. The upstream learns the key and its client from
// X-Hdc-Key-Id and X-Hdc-Key-Client-Id.
type JWE struct {
	// Login binds the key to the decrypted body's client_id instead of the
	// bearer token's client: for the login route, which has no token yet.
	Login bool `json:"login,omitempty"`
	// AnyClient accepts any client's key and leaves binding it to the
	// upstream, which gets the key's client: for a route whose credential
	// is in the body, where the edge cannot read it (the refresh
	// compatibility route, whose refresh token is opaque).
	AnyClient bool `json:"any_client,omitempty"`
	// Require refuses requests that are not encrypted.
	Require bool `json:"require,omitempty"`
	// MaxBody caps the encrypted body in bytes (default 1 MiB).
	MaxBody int64 `json:"max_body,omitempty"`
	// SpoolThreshold is the ciphertext size above which it is spooled to a
	// temporary file instead of memory (default 2 MiB: a payload of 1 MiB,
	// whose ciphertext is 16 bytes more, stays in memory).
	SpoolThreshold int64 `json:"spool_threshold,omitempty"`
	// SpoolDir is where spool files go (default the system's temporary
	// directory). They are unlinked as soon as they are created.
	SpoolDir string `json:"spool_dir,omitempty"`
	// MaxResponse caps the response body the edge encrypts (default 16 MiB);
	// a larger one is refused, never sent in plaintext.
	MaxResponse int64 `json:"max_response,omitempty"`

	app    *edge.App
	logger *zap.Logger
}

const (
	defaultMaxBody     = 1 << 20
	defaultMaxResponse = 16 << 20
	maxLoginBody       = 64 << 10
)

// CaddyModule returns the Caddy module information.
func (JWE) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.hdc_jwe",
		New: func() caddy.Module { return new(JWE) },
	}
}

// Provision fetches the hdc app and applies defaults.
func (j *JWE) Provision(ctx caddy.Context) error {
	j.logger = ctx.Logger()
	app, err := edge.AppOf(ctx)
	if err != nil {
		return err
	}
	j.app = app
	if j.Login && j.AnyClient {
		return errors.New("hdc_jwe: login and any_client exclude each other")
	}
	if j.MaxBody <= 0 {
		j.MaxBody = defaultMaxBody
	}
	if j.SpoolThreshold <= 0 {
		j.SpoolThreshold = spool.DefaultThreshold
	}
	if j.SpoolDir == "" {
		j.SpoolDir = os.TempDir()
	}
	if j.MaxResponse <= 0 {
		j.MaxResponse = defaultMaxResponse
	}
	return nil
}

// jweFields are the request headers only hdc_jwe sets: canonical, so that
// they are deleted from the map without canonicalizing them on every
// request.
var jweFields = []string{contract.HeaderKeyID, contract.HeaderKeyClientID, contract.HeaderJTI, contract.HeaderJTIExpires}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (j *JWE) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	// Only this handler may say which key was used, and which jti.
	for _, name := range jweFields {
		delete(r.Header, name)
	}
	encrypted, p := encryptionRequested(r.Header)
	switch {
	case p != nil:
		edge.Metrics.JWERequests.WithLabelValues("unknown", p.Code).Inc()
		problem.Write(w, p)
		return nil
	case !encrypted && j.Require:
		problem.Write(w, errEncryptionRequired)
		return nil
	case !encrypted:
		return next.ServeHTTP(w, r)
	}
	client := ""
	if j.tokenBound() {
		client = edge.ClientID(r)
		if client == "" {
			return caddyhttp.Error(http.StatusInternalServerError,
				errors.New("hdc_jwe: no authenticated client; put hdc_auth before hdc_jwe or use login or any_client mode"))
		}
	}
	start := time.Now()
	ctx, span := edge.StartSpan(r.Context(), "hdc_jwe decrypt")
	o, sp, p := j.openRequest(ctx, r, client)
	if sp != nil {
		defer sp.Close()
	}
	if span.IsRecording() { // kidLabel looks the kid up: not for a span that records nothing
		edge.EndSpan(span, p, edge.AttrKid.String(j.kidLabel(o.kid)), edge.AttrEnc.String(o.enc),
			edge.AttrInBytes.Int64(r.ContentLength), edge.AttrOutBytes.Int64(o.size))
	}
	switch {
	case p == edge.ErrPassedQuota: // hdc_ratelimit, which metered the body, answers
		return edge.ErrQuotaPassed
	case p != nil && o.key != nil:
		j.refuseEncrypted(w, r, client, o, p, start)
		return nil
	case p != nil:
		j.refuse(w, r, client, o.kid, p, start)
		return nil
	}
	series := j.accept(r, client, o, start)
	return j.serveEncrypted(w, r, next, o, series)
}

// tokenBound reports whether a key must belong to the bearer token's
// client.
func (j *JWE) tokenBound() bool { return !j.Login && !j.AnyClient }

// encryptionRequested reads the opt-in: no X-Encryption field, or exactly
// one whose value is JWE (in any case). Anything else (two fields, a list,
// another value) is refused, so that a client that meant to ask for
// encryption never gets a plaintext answer.
func encryptionRequested(h http.Header) (bool, *problem.Problem) {
	v := h[contract.HeaderEncryption] // canonical
	switch {
	case len(v) == 0:
		return false, nil
	case len(v) == 1 && strings.EqualFold(strings.TrimSpace(v[0]), contract.EncryptionJWE):
		return true, nil
	}
	return false, errEncryptionHeader
}

// opened is an encrypted request whose key is established: its envelope
// was verified and its plaintext forwarded, or it has no body and asks for
// an encrypted answer.
type opened struct {
	kid     string
	enc     string // the envelope's content encryption, when it has a body
	owner   string // the key's client
	key     *jwe.CEK
	size    int64 // plaintext bytes forwarded
	compact bool  // the answer is in the compact serialization
	// fresh are the hop headers of the envelope's jti, for the backend's
	// replay check; nil when it named none.
	fresh http.Header
}

// openRequest establishes the key of an encrypted request and, when it has
// a body, replaces the body with its plaintext. The spool it returns, if
// any, is the caller's to close once the request is served.
func (j *JWE) openRequest(ctx context.Context, r *http.Request, client string) (opened, *spool.Spool, *problem.Problem) {
	if r.ContentLength == 0 && len(r.TransferEncoding) == 0 || r.ContentLength < 0 && emptyBody(r) {
		o, p := j.responseOnly(ctx, r, client)
		return o, nil, p
	}
	limit := j.bodyLimit()
	if r.ContentLength > limit {
		return opened{}, nil, edge.TooLarge(limit)
	}
	// The decoded ciphertext is about 3/4 of the body, which the route's
	// limit bounds whatever the client announced.
	sp := spool.New(j.SpoolThreshold, j.SpoolDir, min(r.ContentLength, limit)/4*3)
	o, p := j.decryptBody(ctx, r, client, sp)
	return o, sp, p
}

// bodyLimit is the most envelope bytes this route reads.
func (j *JWE) bodyLimit() int64 {
	if j.Login {
		return min(j.MaxBody, maxLoginBody)
	}
	return j.MaxBody
}

// refuse answers a request whose key could not be established, plainly.
func (j *JWE) refuse(w http.ResponseWriter, r *http.Request, client, kid string, p *problem.Problem, start time.Time) {
	j.noteRefusal(r, client, kid, p, start)
	if p == errKeyLookupsBusy {
		w.Header().Set("Retry-After", "1")
	}
	problem.Write(w, p)
}

// refuseEncrypted answers p encrypted under the request's key, which was
// established before p was decided (a stale or replayed envelope, say), as
// the backend's answers to such a request are: a client that opens every
// answer reads the code.
func (j *JWE) refuseEncrypted(w http.ResponseWriter, r *http.Request, client string, o opened, p *problem.Problem, start time.Time) {
	j.noteRefusal(r, client, o.kid, p, start)
	edge.SetField(w.Header(), "Cache-Control", "no-store")
	s := &encrypter{ctx: r.Context(), w: w, key: o.key, kid: o.kid, compact: o.compact}
	s.writeEncrypted(p.Status, p.Body())
}

// noteRefusal counts and logs a refused encrypted request.
func (j *JWE) noteRefusal(r *http.Request, client, kid string, p *problem.Problem, start time.Time) {
	label := j.kidLabel(kid)
	edge.Metrics.JWERequests.WithLabelValues(label, p.Code).Inc()
	j.logger.Info("encrypted request refused", append(telemetry.LogFields(r.Context()),
		zap.String("kid", label), zap.String("client", client), zap.String("path", r.URL.Path),
		zap.Int64("content_length", r.ContentLength), zap.String("code", p.Code), zap.Duration("duration", time.Since(start)))...)
}

// accept records an opened request and rewrites its headers for the
// upstream. It returns the kid's series, which the answer moves too.
func (j *JWE) accept(r *http.Request, client string, o opened, start time.Time) *edge.KidSeries {
	series := edge.Metrics.ForKid(o.kid)
	series.Accepted.Inc()
	series.DecryptedBytes.Add(float64(o.size))
	series.LastUsed.Set(float64(j.app.ClientKeys().Touch(o.kid).UnixNano()) / 1e9)
	if ce := j.logger.Check(zap.DebugLevel, "encrypted request"); ce != nil { // no fields built when off
		ce.Write(append(telemetry.LogFields(r.Context()), zap.String("kid", o.kid), zap.String("client", client),
			zap.String("path", r.URL.Path), zap.Int64("plaintext_bytes", o.size), zap.Duration("decrypt", time.Since(start)))...)
	}
	edge.SetField(r.Header, contract.HeaderKeyID, o.kid)
	edge.SetField(r.Header, contract.HeaderKeyClientID, o.owner)
	for name, v := range o.fresh {
		r.Header[name] = v
	}
	// The response is encrypted whole: ask the upstream for the plain
	// representation, not a compressed or partial one.
	for _, name := range acceptedDropped {
		delete(r.Header, name)
	}
	return series
}

// acceptedDropped are the request headers an accepted request loses: how
// it was encrypted, and what would make the upstream's answer compressed
// or partial.
var acceptedDropped = []string{contract.HeaderEncryption, contract.HeaderEncryptionKid, "Accept-Encoding", "Range", "If-Range"}

// serveEncrypted serves the request with next and answers its response
// encrypted under the request's key.
func (j *JWE) serveEncrypted(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, o opened, series *edge.KidSeries) error {
	s := &encrypter{ctx: r.Context(), w: w, key: o.key, kid: o.kid, compact: o.compact, limit: int(j.MaxResponse)}
	defer s.release()
	if err := next.ServeHTTP(s, r); err != nil {
		j.logger.Error("upstream handler failed under an encrypted request",
			append(telemetry.LogFields(r.Context()), zap.String("kid", o.kid), zap.Error(err))...)
		s.encryptProblem(upstreamProblem(err))
		edge.Metrics.JWEEncryptedResponses.WithLabelValues(o.kid, "error").Inc()
		return nil
	}
	if s.finish() {
		j.logger.Warn("response too large to encrypt; refused",
			append(telemetry.LogFields(r.Context()), zap.String("kid", o.kid), zap.Int64("limit", j.MaxResponse))...)
		edge.Metrics.JWEEncryptedResponses.WithLabelValues(o.kid, "too_large").Inc()
		return nil
	}
	series.Encrypted.Inc()
	return nil
}

// upstreamProblem turns a handler error below this one into the problem the
// client gets, keeping its status when it has one.
func upstreamProblem(err error) *problem.Problem {
	var he caddyhttp.HandlerError
	if errors.As(err, &he) && he.StatusCode >= 400 {
		return problem.New(he.StatusCode, errUpstream.Code, errUpstream.Detail)
	}
	return errUpstream
}

// kidLabel is kid as a metric label and log field: only kids the edge
// holds, so a client cannot mint label values or log lines at will.
func (j *JWE) kidLabel(kid string) string {
	if j.app.ClientKeys().Known(kid) {
		return kid
	}
	return "unknown"
}

// Interface guards
var (
	_ caddy.Provisioner           = (*JWE)(nil)
	_ caddyhttp.MiddlewareHandler = (*JWE)(nil)
)
