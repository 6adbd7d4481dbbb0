package hdcjwe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/health-data-connect/hdc/caddymodule/edge"
	"github.com/health-data-connect/hdc/caddymodule/spool"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/problem"
	kidregistry "github.com/health-data-connect/hdc/kid-registry"
)

// responseOnly handles a body-less request that asks for an encrypted
// response with X-Encryption-Kid.
func (j *JWE) responseOnly(ctx context.Context, r *http.Request, client string) (opened, *problem.Problem) {
	if j.Login {
		return opened{}, errLoginNeedsBody
	}
	kids := r.Header[contract.HeaderEncryptionKid]
	switch {
	case len(kids) > 1:
		return opened{}, errKidHeader
	case len(kids) == 0 || kids[0] == "":
		return opened{}, errNeedsKidHeader
	}
	kid := kids[0]
	k, held, err := j.usableKey(ctx, r, kid, client)
	switch {
	case errors.Is(err, kidregistry.ErrBusy):
		return opened{kid: kid}, errKeyLookupsBusy
	case err != nil:
		return opened{kid: kid}, j.keyRefused(r, held)
	}
	key, err := j.app.ClientKeys().Cipher(k)
	if err != nil {
		return opened{kid: kid}, errInvalidEncryption
	}
	return opened{kid: kid, owner: k.ClientID, key: key, compact: acceptsCompact(r.Header)}, nil
}

// emptyBody reports whether a request whose length is unknown until its
// body ends (HTTP/3, or HTTP/2, without content-length; a chunked HTTP/1.1
// body) has an empty body, reading its first byte; a byte read is put back.
// HTTP/3 clients announce no length on a request without a body, and the
// server cannot tell it from one whose body is still to come.
func emptyBody(r *http.Request) bool {
	var b [1]byte
	n, err := io.ReadFull(r.Body, b[:])
	if n == 0 && errors.Is(err, io.EOF) {
		return true
	}
	r.Body = readCloser{io.MultiReader(bytes.NewReader(b[:n]), r.Body), r.Body}
	return false
}

// readCloser is a body read from one reader and closed by another.
type readCloser struct {
	io.Reader
	io.Closer
}

// acceptsCompact reports whether a body-less request asks for its answer
// in the compact serialization: its Accept header names application/jose.
func acceptsCompact(h http.Header) bool {
	for _, v := range h["Accept"] {
		for _, mr := range strings.Split(v, ",") {
			if mt, _, err := mime.ParseMediaType(mr); err == nil && mt == "application/jose" {
				return true
			}
		}
	}
	return false
}

// decryptBody reads, verifies and decrypts the envelope in r's body, and
// replaces the body with the plaintext.
func (j *JWE) decryptBody(ctx context.Context, r *http.Request, client string, sp *spool.Spool) (opened, *problem.Problem) {
	env, form, p := j.readEnvelope(r, sp)
	if p != nil {
		return opened{}, p
	}
	o := opened{kid: env.Kid, enc: env.Header.Enc, compact: form == jwe.Compact}
	// Unknown, retired and foreign keys, and a key of another enc than the
	// envelope's, cost the same work as a real one: the tag is checked
	// against a key nobody holds, and fails.
	k, key, held, err := j.keyOrDummy(ctx, r, env.Kid, client, env.Header.Enc)
	if errors.Is(err, kidregistry.ErrBusy) {
		return o, errKeyLookupsBusy
	}
	body, size, err := open(env, key, sp)
	if err != nil || k == nil {
		return o, j.keyRefused(r, held)
	}
	if j.Login {
		if body, p = bindLogin(body, size, k.ClientID); p == errInvalidEncryption {
			return o, j.keyRefused(r, held) // a key of another client: the one answer of every key failure
		}
	}
	// The key is established: a refusal from here on goes encrypted.
	o.owner, o.key, o.size = k.ClientID, key, size
	if p != nil {
		return o, p
	}
	if o.fresh, p = j.app.Freshness().Check(k, env.Header); p != nil {
		return o, p
	}
	replaceBody(r, body, size)
	return o, nil
}

// readEnvelope reads the envelope of r's body into sp, in the form its
// media type names, and checks that it names a key. It returns the form
// too, which the answer takes.
func (j *JWE) readEnvelope(r *http.Request, sp *spool.Spool) (*jwe.Envelope, jwe.Form, *problem.Problem) {
	var form jwe.Form
	mt, _, _ := mime.ParseMediaType(edge.Field(r.Header, "Content-Type"))
	switch mt {
	case "application/json", "application/jose+json": // RFC 7516 §9.2.1
		form = jwe.Request
	case "application/jose":
		form = jwe.Compact
	default:
		return nil, form, errMediaType
	}
	limit := j.bodyLimit()
	env, err := jwe.Read(r.Body, form, sp, limit)
	if p := readProblem(err, limit); p != nil {
		return nil, form, p
	}
	if env.Kid == "" {
		return nil, form, errMissingKid
	}
	return env, form, nil
}

// keyOrDummy returns the key kid and its cipher when client may use it and
// its enc is enc, and a nil key with the dummy cipher of enc otherwise;
// and whether the edge held the key before (keyRefused).
func (j *JWE) keyOrDummy(ctx context.Context, r *http.Request, kid, client, enc string) (*clientkey.Key, *jwe.CEK, bool, error) {
	held := j.app.ClientKeys().Known(kid)
	ctx, span := j.startKeySpan(ctx, kid, held)
	k, key, err := j.app.ClientKeys().ForEnvelope(ctx, kid, clientAddr(r), client, !j.tokenBound(), enc)
	endKeySpan(span, k, err)
	return k, key, held, err
}

// keyRefused is the answer to a request refused on its key, whose kid the
// edge held before the request (held) or not: invalid_encryption, the one
// answer of every key failure, unless the request's source has spent its
// look-up ration, when it is key_lookups_busy, as for any kid the edge does
// not hold (kidregistry.Keys.Refused).
func (j *JWE) keyRefused(r *http.Request, held bool) *problem.Problem {
	if j.app.ClientKeys().Refused(clientAddr(r), held) != nil {
		return errKeyLookupsBusy
	}
	return errInvalidEncryption
}

// bindLogin checks that the decrypted login body names the key's client,
// and returns the body to forward.
func bindLogin(body io.Reader, size int64, keyClient string) (io.Reader, *problem.Problem) {
	plain := make([]byte, size)
	if _, err := io.ReadFull(body, plain); err != nil {
		return nil, errInvalidEncryption
	}
	var login struct {
		ClientID *string `json:"client_id"`
	}
	if json.Unmarshal(plain, &login) != nil || login.ClientID == nil {
		return nil, errLoginBody
	}
	if *login.ClientID != keyClient {
		return nil, errInvalidEncryption
	}
	return bytes.NewReader(plain), nil
}

// replaceBody makes body, of size bytes of JSON, r's body.
func replaceBody(r *http.Request, body io.Reader, size int64) {
	if rc, ok := body.(io.ReadCloser); ok {
		r.Body = rc
	} else {
		r.Body = io.NopCloser(body)
	}
	r.GetBody = nil
	r.ContentLength = size
	r.TransferEncoding = nil
	delete(r.Header, "Transfer-Encoding")
	edge.SetField(r.Header, "Content-Length", strconv.FormatInt(size, 10))
	edge.SetField(r.Header, "Content-Type", "application/json")
}

// open verifies the spooled ciphertext and returns a reader of its
// plaintext and the plaintext's size. A ciphertext in memory is decrypted in
// place, in one call, and read from there; one on disk is decrypted as a
// stream on its way upstream.
func open(env *jwe.Envelope, key *jwe.CEK, sp *spool.Spool) (io.Reader, int64, error) {
	if mem, ok := sp.InMemory(); ok {
		plain, err := env.DecryptInPlace(key, mem)
		if err != nil {
			return nil, 0, err
		}
		return spool.NewPlainBody(plain, sp.TakeMemory()), int64(len(plain)), nil
	}
	return env.Open(key, sp)
}

// readProblem maps an error of jwe.Read to the client's answer; limit is
// the route's, which a body too large is told. The errors of the body
// itself are edge.ReadProblem's.
func readProblem(err error, limit int64) *problem.Problem {
	if err == nil { // before the targets of errors.As, which escape
		return nil
	}
	var fe *jwe.FormatError
	switch {
	case errors.As(err, &fe):
		return invalidEnvelope(fe.Reason)
	case errors.Is(err, jwe.ErrTooLarge):
		return edge.TooLarge(limit)
	default:
		return edge.ReadProblem(err)
	}
}

// usableKey returns the key kid if the request may use it: active or
// retiring, and the token's client's (any client's in login and
// any_client modes, where the body decides); and whether the edge held
// the key before (keyRefused).
func (j *JWE) usableKey(ctx context.Context, r *http.Request, kid, client string) (*clientkey.Key, bool, error) {
	held := j.app.ClientKeys().Known(kid)
	ctx, span := j.startKeySpan(ctx, kid, held)
	k, err := j.app.ClientKeys().Usable(ctx, kid, clientAddr(r), client, !j.tokenBound())
	endKeySpan(span, k, err)
	return k, held, err
}

// startKeySpan starts the span of kid's look-up, saying whether the edge
// held the key before it.
func (j *JWE) startKeySpan(ctx context.Context, kid string, held bool) (context.Context, trace.Span) {
	ctx, span := edge.StartSpan(ctx, "hdc_jwe key")
	if span.IsRecording() {
		span.SetAttributes(edge.AttrKid.String(j.kidLabel(kid)), edge.AttrCached.Bool(held))
	}
	return ctx, span
}

// endKeySpan ends a look-up's span with its outcome: ok, key_lookups_busy,
// or unknown (no key this request may use: the answer, invalid_encryption,
// is decided later, at the cost of an opening).
func endKeySpan(span trace.Span, k *clientkey.Key, err error) {
	if !span.IsRecording() {
		return
	}
	outcome := "ok"
	switch {
	case errors.Is(err, kidregistry.ErrBusy):
		outcome = errKeyLookupsBusy.Code
	case k == nil || err != nil:
		outcome = "unknown"
	default:
		span.SetAttributes(edge.AttrEnc.String(k.ContentEncryption()))
	}
	span.SetAttributes(edge.AttrOutcome.String(outcome))
	span.End()
}

// clientAddr is the request's client address, on whose behalf a kid may be
// looked up.
func clientAddr(r *http.Request) string {
	addr, _ := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string)
	return addr
}
