package caddymodule

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/caddymodule/jwe"
	"github.com/health-data-connect/hdc/caddymodule/jwe/cbchmac"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
	kidregistry "github.com/health-data-connect/hdc/kid-registry"
)

func init() {
	caddy.RegisterModule(Transport{})
}

// Transport is the hdc_jwe handler: it decrypts JWE request bodies, forwards
// the plaintext JSON, and encrypts the response with the same key.
//
// A request opts in with "X-Encryption: JWE". Its body is a flattened JWE
// (application/json) or a compact one (application/jose), naming the key by
// kid; the key must belong to the client the bearer token names (set by
// hdc_auth before this handler), or, on the login route, to the client_id
// inside the decrypted body. A request without a body asks for an encrypted
// response with "X-Encryption-Kid". Every failure that involves a key gives
// the same answer.
type Transport struct {
	// Login binds the key to the decrypted body's client_id instead of the
	// bearer token's client: for the login route, which has no token yet.
	Login bool `json:"login,omitempty"`
	// Require refuses requests that are not encrypted.
	Require bool `json:"require,omitempty"`
	// MaxBody caps the encrypted body in bytes (default 1 MiB).
	MaxBody int64 `json:"max_body,omitempty"`
	// SpoolThreshold is the ciphertext size above which it is spooled to a
	// temporary file instead of memory (default 1 MiB).
	SpoolThreshold int64 `json:"spool_threshold,omitempty"`
	// SpoolDir is where spool files go (default the system's temporary
	// directory). They are unlinked as soon as they are created.
	SpoolDir string `json:"spool_dir,omitempty"`
	// MaxResponse caps the response body the edge encrypts (default 16 MiB);
	// a larger one is refused, never sent in plaintext.
	MaxResponse int64 `json:"max_response,omitempty"`

	app    *App
	logger *zap.Logger
}

const (
	defaultMaxBody        = 1 << 20
	defaultSpoolThreshold = 1 << 20
	defaultMaxResponse    = 16 << 20
	maxLoginBody          = 64 << 10

	// Caddy variables through which hdc_auth and hdc_jwe share the identity.
	varClientID    = "hdc.client_id"
	varWorkspaceID = "hdc.workspace_id"
	varTokenID     = "hdc.token_id"
	varKeyID       = "hdc.key_id"
)

// CaddyModule returns the Caddy module information.
func (Transport) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.hdc_jwe",
		New: func() caddy.Module { return new(Transport) },
	}
}

// Provision fetches the hdc app and applies defaults.
func (t *Transport) Provision(ctx caddy.Context) error {
	t.logger = ctx.Logger()
	app, err := ctx.App("hdc")
	if err != nil {
		return err
	}
	t.app = app.(*App)
	if t.MaxBody <= 0 {
		t.MaxBody = defaultMaxBody
	}
	if t.SpoolThreshold <= 0 {
		t.SpoolThreshold = defaultSpoolThreshold
	}
	if t.SpoolDir == "" {
		t.SpoolDir = os.TempDir()
	}
	if t.MaxResponse <= 0 {
		t.MaxResponse = defaultMaxResponse
	}
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (t *Transport) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	r.Header.Del(contract.HeaderKeyID) // only this handler may say which key was used
	if !strings.EqualFold(r.Header.Get(contract.HeaderEncryption), contract.EncryptionJWE) {
		if t.Require {
			problem.Write(w, errEncryptionRequired)
			return nil
		}
		return next.ServeHTTP(w, r)
	}
	client := ""
	if !t.Login {
		client, _ = caddyhttp.GetVar(r.Context(), varClientID).(string)
		if client == "" {
			return caddyhttp.Error(http.StatusInternalServerError,
				errors.New("hdc_jwe: no authenticated client; put hdc_auth before hdc_jwe or use login mode"))
		}
	}
	start := time.Now()
	var (
		kid  string
		key  *cbchmac.Key
		size int64
		p    *problem.Problem
	)
	if r.ContentLength == 0 && len(r.TransferEncoding) == 0 {
		kid, key, p = t.responseOnly(r, client)
	} else {
		// The decoded ciphertext is about 3/4 of the body.
		sp := newSpool(t.SpoolThreshold, t.SpoolDir, r.ContentLength/4*3)
		defer sp.Close()
		kid, key, size, p = t.decryptBody(r, client, sp)
	}
	label := t.kidLabel(kid)
	if p != nil {
		jweRequests.WithLabelValues(label, p.Code).Inc()
		t.logger.Info("encrypted request refused", zap.String("kid", label), zap.String("client", client),
			zap.String("path", r.URL.Path), zap.Int64("content_length", r.ContentLength),
			zap.String("code", p.Code), zap.Duration("duration", time.Since(start)))
		problem.Write(w, p)
		return nil
	}
	jweRequests.WithLabelValues(kid, "ok").Inc()
	jweDecryptedBytes.WithLabelValues(kid).Add(float64(size))
	t.app.touchKey(kid)
	if ce := t.logger.Check(zap.DebugLevel, "encrypted request"); ce != nil { // no fields built when off
		ce.Write(zap.String("kid", kid), zap.String("client", client), zap.String("path", r.URL.Path),
			zap.Int64("plaintext_bytes", size), zap.Duration("decrypt", time.Since(start)))
	}

	caddyhttp.SetVar(r.Context(), varKeyID, kid)
	r.Header.Set(contract.HeaderKeyID, kid)
	r.Header.Del(contract.HeaderEncryption)
	r.Header.Del(contract.HeaderEncryptionKid)
	// The response is sealed whole: ask the upstream for the plain
	// representation, not a compressed or partial one.
	for _, h := range []string{"Accept-Encoding", "Range", "If-Range"} {
		r.Header.Del(h)
	}

	s := &sealer{w: w, key: key, kid: kid, limit: int(t.MaxResponse)}
	if err := next.ServeHTTP(s, r); err != nil {
		t.logger.Error("upstream handler failed under an encrypted request", zap.String("kid", kid), zap.Error(err))
		s.sealProblem(upstreamProblem(err))
		jweEncryptedResponses.WithLabelValues(kid, "error").Inc()
		return nil
	}
	if s.finish() {
		t.logger.Warn("response too large to encrypt; refused", zap.String("kid", kid), zap.Int64("limit", t.MaxResponse))
		jweEncryptedResponses.WithLabelValues(kid, "too_large").Inc()
		return nil
	}
	jweEncryptedResponses.WithLabelValues(kid, "ok").Inc()
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

// responseOnly handles a body-less request that asks for an encrypted
// response with X-Encryption-Kid.
func (t *Transport) responseOnly(r *http.Request, client string) (string, *cbchmac.Key, *problem.Problem) {
	if t.Login {
		return "", nil, errLoginNeedsBody
	}
	kid := r.Header.Get(contract.HeaderEncryptionKid)
	if kid == "" {
		return "", nil, errNeedsKidHeader
	}
	k, ok := t.usableKey(kid, client)
	if !ok {
		return kid, nil, errInvalidEncryption
	}
	key, err := t.app.cipherFor(k)
	if err != nil {
		return kid, nil, errInvalidEncryption
	}
	return kid, key, nil
}

// decryptBody reads, verifies and decrypts the envelope in r's body, and
// replaces the body with the plaintext.
func (t *Transport) decryptBody(r *http.Request, client string, sp *spool) (kid string, key *cbchmac.Key, size int64, p *problem.Problem) {
	var form jwe.Form
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		form = jwe.Request
	case "application/jose":
		form = jwe.Compact
	default:
		return "", nil, 0, errMediaType
	}
	limit := t.MaxBody
	if t.Login {
		limit = min(limit, maxLoginBody)
	}
	env, err := jwe.Read(r.Body, form, sp, limit)
	if p := readProblem(err); p != nil {
		return "", nil, 0, p
	}
	kid = env.Kid
	if kid == "" {
		return "", nil, 0, errMissingKid
	}

	// Unknown, retired and foreign keys cost the same work as a real one:
	// the tag is checked against a key nobody holds, and fails.
	k, ok := t.usableKey(kid, client)
	if ok {
		key, err = t.app.cipherFor(k)
		ok = err == nil
	}
	if !ok {
		key = t.app.keys.dummy
	}
	body, size, err := open(env, key, sp)
	if err != nil || !ok {
		return kid, nil, 0, errInvalidEncryption
	}
	if t.Login {
		plain := make([]byte, size)
		if _, err := io.ReadFull(body, plain); err != nil {
			return kid, nil, 0, errInvalidEncryption
		}
		var login struct {
			ClientID *string `json:"client_id"`
		}
		if json.Unmarshal(plain, &login) != nil || login.ClientID == nil {
			return kid, nil, 0, errLoginBody
		}
		if *login.ClientID != k.ClientID {
			return kid, nil, 0, errInvalidEncryption
		}
		body = bytes.NewReader(plain)
	}
	r.Body = io.NopCloser(body)
	r.GetBody = nil
	r.ContentLength = size
	r.TransferEncoding = nil
	r.Header.Del("Transfer-Encoding")
	r.Header.Set("Content-Length", strconv.FormatInt(size, 10))
	r.Header.Set("Content-Type", "application/json")
	return kid, key, size, nil
}

// open verifies the spooled ciphertext and returns a reader of its
// plaintext and the plaintext's size. A ciphertext in memory is decrypted in
// place, in one call, and read from there; one on disk is decrypted as a
// stream on its way upstream.
func open(env *jwe.Envelope, key *cbchmac.Key, sp *spool) (io.Reader, int64, error) {
	if mem, ok := sp.inMemory(); ok {
		plain, err := env.DecryptInPlace(key, mem)
		return bytes.NewReader(plain), int64(len(plain)), err
	}
	pt, err := env.Open(key, sp)
	if err != nil {
		return nil, 0, err
	}
	return pt, pt.Size, nil
}

// readProblem maps an error of jwe.Read to the client's answer.
func readProblem(err error) *problem.Problem {
	var fe *jwe.FormatError
	var mbe *http.MaxBytesError
	var se *spoolError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return errSpool
	case errors.As(err, &fe):
		return invalidEnvelope(fe.Reason)
	case errors.Is(err, jwe.ErrTooLarge), errors.As(err, &mbe):
		return errTooLarge
	default:
		return errBodyRead
	}
}

// usableKey returns the key kid if it is active or retiring and belongs to
// client (any client in login mode, where the body decides).
func (t *Transport) usableKey(kid, client string) (*kidregistry.Key, bool) {
	k, ok := t.app.lookupKey(kid)
	if !ok || !k.Usable() || (!t.Login && k.ClientID != client) {
		return nil, false
	}
	return k, true
}

// kidLabel is kid as a metric label and log field: only kids of the
// registry, so a client cannot mint label values or log lines at will.
func (t *Transport) kidLabel(kid string) string {
	if _, ok := t.app.keys.watcher.Registry().Lookup(kid); ok {
		return kid
	}
	return "unknown"
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Transport)(nil)
	_ caddyhttp.MiddlewareHandler = (*Transport)(nil)
)
