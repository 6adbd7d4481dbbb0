package hdcjwe

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"

	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/health-data-connect/hdc/caddymodule/edge"
	"github.com/health-data-connect/hdc/caddymodule/spool"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/problem"
)

// encrypter buffers the response to an encrypted request and replaces it
// with a response envelope. It is hand-written rather than caddyhttp's
// ResponseRecorder because its buffer must be bounded: past the limit it
// drops the body and answers an error, so a large response is never sent in
// plaintext. It implements no Unwrap, so that nothing below it (a flush, a
// hijack) can reach the client's connection before the body is encrypted.
type encrypter struct {
	ctx     context.Context // the request's, whose trace the encryption's span joins
	w       http.ResponseWriter
	key     *jwe.CEK
	kid     string
	compact bool // answer in the compact serialization, else the flattened JSON one
	limit   int
	status  int
	buf     []byte // the plaintext answer, in a pooled buffer (release)
	overrun bool
}

func (s *encrypter) Header() http.Header { return s.w.Header() }

func (s *encrypter) WriteHeader(status int) {
	if s.status != 0 || status < 200 { // informational responses are dropped
		return
	}
	s.status = status
}

func (s *encrypter) Write(p []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	if s.overrun {
		return len(p), nil
	}
	if len(s.buf)+len(p) > s.limit {
		s.overrun = true
		s.release()
		return len(p), nil
	}
	if s.buf == nil {
		s.buf = spool.TakeBuffer(s.sizeHint(len(p)))
	}
	s.buf = append(s.buf, p...)
	return len(p), nil
}

// sizeHint is the room the answer's buffer needs: the Content-Length the
// upstream gave, when it is within the limit, else the first write's.
func (s *encrypter) sizeHint(first int) int {
	if n, err := strconv.Atoi(edge.Field(s.w.Header(), "Content-Length")); err == nil && n > first && n <= s.limit {
		return n
	}
	return first
}

// release gives the buffer back, once its plaintext is encrypted or dropped.
func (s *encrypter) release() {
	if s.buf != nil {
		spool.GiveBuffer(s.buf)
		s.buf = nil
	}
}

// FlushError does nothing: nothing may reach the client before the envelope.
func (s *encrypter) FlushError() error { return nil }

// Hijack refuses: an encrypted exchange cannot become a raw connection.
func (s *encrypter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return nil, nil, errors.New("hdc_jwe: an encrypted response cannot be hijacked")
}

// plaintextFields are the response headers that describe the plaintext,
// which must not travel with the envelope; canonical, so that they are
// deleted from the map without canonicalizing them on every request.
var plaintextFields = []string{"Etag", "Last-Modified", "Accept-Ranges", "Content-Range",
	"Content-Encoding", "Content-Md5", "Digest", "Content-Digest", "Repr-Digest"}

// finish writes the encrypted response and reports whether it had to refuse
// one that was too large.
func (s *encrypter) finish() (tooLarge bool) {
	if s.overrun {
		s.encryptProblem(errResponseTooLarge)
		return true
	}
	status := s.status
	if status == 0 {
		status = http.StatusOK
	}
	h := s.w.Header()
	for _, name := range plaintextFields {
		delete(h, name)
	}
	if len(s.buf) == 0 {
		delete(h, "Content-Length")
		s.w.WriteHeader(status)
		return false
	}
	s.writeEncrypted(status, s.buf)
	return false
}

// encryptProblem answers p, encrypted.
func (s *encrypter) encryptProblem(p *problem.Problem) {
	h := s.w.Header()
	for name := range h {
		delete(h, name)
	}
	edge.SetField(h, "Cache-Control", "no-store")
	s.writeEncrypted(p.Status, p.Body())
}

// writeEncrypted answers plaintext encrypted, in the serialization the
// request used: compact as application/jose, flattened JSON as
// application/json.
func (s *encrypter) writeEncrypted(status int, plaintext []byte) {
	_, span := edge.StartSpan(s.ctx, "hdc_jwe encrypt")
	env, mediaType := jwe.EncryptResponse(s.key, s.kid, plaintext), "application/json"
	if s.compact {
		env, mediaType = jwe.EncryptCompact(s.key, jwe.Protected{Kid: s.kid}, plaintext), "application/jose"
	}
	if span.IsRecording() { // the attributes escape: not built for a span that records nothing
		edge.EndSpan(span, nil, edge.AttrKid.String(s.kid), edge.AttrEnc.String(s.key.Enc()),
			edge.AttrInBytes.Int(len(plaintext)), edge.AttrOutBytes.Int(len(env)), semconv.HTTPResponseStatusCode(status))
	}
	h := s.w.Header()
	edge.SetField(h, "Content-Type", mediaType)
	edge.SetField(h, contract.HeaderEncryption, contract.EncryptionJWE)
	edge.SetField(h, "Content-Length", strconv.Itoa(len(env)))
	s.w.WriteHeader(status)
	_, _ = s.w.Write(env)
}
