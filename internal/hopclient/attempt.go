package hopclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// MayHaveArrived is the error of a request that reached a backend, or may
// have, and failed there in a way that does not say whether the backend
// acted on it (the connection lost after it was sent, no answer within
// the attempt's deadline), when it is not safe to send again: no other
// backend was asked.
type MayHaveArrived struct {
	Backend string
	Err     error
}

func (e *MayHaveArrived) Error() string {
	return fmt.Sprintf("%s may have received the request: %v", e.Backend, e.Err)
}

func (e *MayHaveArrived) Unwrap() error { return e.Err }

// errRefused says that a backend refused the connection, in place of
// the dial's own error (dial tcp 127.0.0.1:9081: connect: connection
// refused), which names the backend a second time.
var errRefused = errors.New("connection refused")

// attemptError is the failure of an attempt on a backend that the
// request moved on from: whether anything of it was sent, and why.
type attemptError struct {
	backend string
	err     error
	sent    bool
}

func (e *attemptError) Error() string { return e.backend + ": " + e.err.Error() }

func (e *attemptError) Unwrap() error { return e.err }

// maxProblem bounds what is read of a 5xx answer the request moves on
// from, for its problem's code and detail.
const maxProblem = 64 << 10

// attempt sends r to the backend n, its body again when again, and says
// whether the request is to move on to the next backend: with an error
// naming the backend, when nothing of it was received or it may be sent
// again; otherwise it returns what the backend answered, or the error of
// a request it may have received (*MayHaveArrived).
func (t *Transport) attempt(r *http.Request, n int, again bool) (*http.Response, bool, error) {
	b := t.backends[n]
	bound := t.attemptOf(r.Context())
	req, cancel, timedOut, err := t.prepare(r, b, again, bound)
	if err != nil {
		return nil, false, err
	}
	var connected atomic.Bool
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { connected.Store(true) }}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		cancel()
		switch {
		case timedOut():
			err = fmt.Errorf("no answer within %s", bound)
		case errors.Is(err, syscall.ECONNREFUSED):
			err = errRefused
		}
		sent := connected.Load() && !refusedHandshake(err)
		if !sent || safe(r) { // nothing of it was received, or it may be sent again
			return nil, true, &attemptError{backend: name(b), err: err, sent: sent}
		}
		return nil, false, &MayHaveArrived{Backend: name(b), Err: err}
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	if resp.StatusCode < 500 || !safe(r) && (t.cfg.Unserved == nil || !t.cfg.Unserved(resp.StatusCode)) {
		return resp, false, nil
	}
	return nil, true, answerError(name(b), resp)
}

// prepare returns r for the backend b, its body again when again, with a
// context that the attempt's deadline, bound from now (none when 0),
// cancels until an answer begins: cancel releases it, and timedOut
// reports whether the deadline passed.
func (t *Transport) prepare(r *http.Request, b *url.URL, again bool, bound time.Duration) (*http.Request, context.CancelFunc, func() bool, error) {
	ctx, cancel := context.WithCancel(r.Context())
	req := r.Clone(ctx)
	req.URL.Scheme, req.URL.Host, req.URL.User, req.Host = b.Scheme, b.Host, nil, ""
	if again && r.GetBody != nil {
		body, err := r.GetBody()
		if err != nil {
			cancel()
			return nil, nil, nil, err
		}
		req.Body = body
	}
	if bound <= 0 {
		return req, cancel, func() bool { return false }, nil
	}
	var passed atomic.Bool
	timer := time.AfterFunc(bound, func() { passed.Store(true); cancel() })
	trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { timer.Stop() }}
	req = req.WithContext(httptrace.WithClientTrace(ctx, trace))
	return req, func() { timer.Stop(); cancel() }, passed.Load, nil
}

// safe reports whether r may be sent again to another backend after a
// failure that may have come once a backend received it: a GET, HEAD or
// OPTIONS, a request with an Idempotency-Key, or one its caller marked
// repeatable.
func safe(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	return r.Header.Get(contract.HeaderIdempotencyKey) != "" || repeatable(r.Context())
}

// refusedHandshake reports whether err is a TLS alert from the server,
// which crypto/tls reports as a *net.OpError of Op "remote error": a
// server sends one when its side of the handshake fails, before it reads
// a request (a TLS 1.3 server refuses a client's certificate after the
// client's side of the handshake, so its alert comes once the request is
// written, unread).
func refusedHandshake(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

// answerError is the error of the backend's 5xx answer resp, which it
// closes: its status, and its problem's code and detail when it sent one.
func answerError(backend string, resp *http.Response) error {
	defer resp.Body.Close()
	var p problem.Problem
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxProblem))
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == problem.ContentType && json.Unmarshal(body, &p) == nil && p.Code != "" {
		return fmt.Errorf("%s answered %s (%s: %s)", backend, resp.Status, p.Code, p.Detail)
	}
	return fmt.Errorf("%s answered %s", backend, resp.Status)
}

// cancelOnClose is an answer's body whose Close releases its attempt's
// context.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
