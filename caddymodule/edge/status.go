package edge

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// ServeStatus serves fn and returns the status of its answer: the one
// written, or the one of the error it returned, which handle_errors
// answers after it (hdc_auth's timing and hdc_tracing's span).
func ServeStatus(w http.ResponseWriter, fn func(http.ResponseWriter) error) (int, error) {
	sw := &statusWriter{ResponseWriterWrapper: caddyhttp.ResponseWriterWrapper{ResponseWriter: w}, status: http.StatusOK}
	err := fn(sw)
	code := sw.status
	if he := (caddyhttp.HandlerError{}); errors.As(err, &he) {
		code = he.StatusCode
		if code == 0 {
			code = http.StatusInternalServerError
		}
	}
	return code, err
}

// statusWriter remembers the status of the answer it passes on: the first
// one that is not informational, or 200 when the body comes first or
// nothing is written. It is Caddy's own wrapper otherwise, whose Unwrap
// lets http.ResponseController reach a flush or a hijack below.
type statusWriter struct {
	caddyhttp.ResponseWriterWrapper
	status  int
	written bool
}

func (w *statusWriter) WriteHeader(status int) {
	if !w.written && status >= 200 {
		w.status, w.written = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	w.written = true
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	w.written = true
	return w.ResponseWriterWrapper.ReadFrom(r)
}

// Flush and Hijack pass through, for a handler below that asserts them
// rather than use http.ResponseController, as on the client's writer.
func (w *statusWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}
