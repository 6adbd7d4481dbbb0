package delivery

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
)

// Outcomes of an attempt that do not come from an answer. They are stored
// with the attempt and shown to subscribers as the last delivery outcome, so
// they name a cause and never quote an error.
const (
	OutcomeDelivered       = "delivered"
	OutcomeTimeout         = "timeout"
	OutcomeConnectionError = "connection_error"
	OutcomeDNSError        = "dns_error"
	OutcomeTLSError        = "tls_error"
	// OutcomeAddressRefused: the endpoint resolved to an address the guard
	// refuses for its workspace (loopback, private, link-local, … that no
	// allowance or grant admits; a listener of the gateway).
	OutcomeAddressRefused = "address_refused"
	// OutcomeInvalidEndpoint: the stored endpoint cannot be requested.
	OutcomeInvalidEndpoint = "invalid_endpoint"
	// OutcomeInvalidEvent: the stored event cannot be encoded.
	OutcomeInvalidEvent = "invalid_event"
	// OutcomeSigningKeyUnavailable: the subscription's signing key, sealed
	// at rest, does not open (package sealed); the delivery is given up
	// rather than sent unsigned.
	OutcomeSigningKeyUnavailable = "signing_key_unavailable"
)

// httpOutcome is the outcome of an HTTP answer with status code.
func httpOutcome(code int) string { return "http_" + strconv.Itoa(code) }

// Result is how an attempt ended.
type Result struct {
	// Outcome is the attempt's short code (store.Attempt.Outcome).
	Outcome string
	// StatusCode is the HTTP status of the answer, 0 when there was none.
	StatusCode int
	// Body is the start of the answer's body (store.Attempt.ResponseBody).
	Body string
	// Delivered: the subscriber accepted the message.
	Delivered bool
	// Gone: the subscriber answered 410; its subscription is disabled.
	Gone bool
	// Permanent: retrying cannot succeed.
	Permanent bool
	// RetryAfter is the delay the subscriber asked for, 0 when none.
	RetryAfter time.Duration
	// Err is the failure, for the log only.
	Err error
}

// sender delivers messages over one protocol. Its Result's Err must not
// hold the endpoint URL (which may carry a subscriber's token) or the body.
type sender interface {
	send(ctx context.Context, sub store.Subscription, m Message) Result
}

// failure classifies an error that left no answer.
func failure(err error) Result {
	err = redact(err)
	var (
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		recErr  tls.RecordHeaderError
		alert   tls.AlertError
		netErr  net.Error
	)
	switch {
	case errors.Is(err, webhook.ErrDestinationRefused):
		return Result{Outcome: OutcomeAddressRefused, Permanent: true, Err: err}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return Result{Outcome: OutcomeTimeout, Err: err}
	case errors.As(err, &dnsErr):
		return Result{Outcome: OutcomeDNSError, Err: err}
	case errors.As(err, &certErr), errors.As(err, &recErr), errors.As(err, &alert):
		return Result{Outcome: OutcomeTLSError, Err: err}
	}
	return Result{Outcome: OutcomeConnectionError, Err: err}
}

// redact drops the URL a *url.Error quotes: a subscriber's endpoint may
// carry a token in its path or query.
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return redacted{op: ue.Op, err: ue.Err}
	}
	return err
}

// redacted is a *url.Error without its URL.
type redacted struct {
	op  string
	err error
}

func (r redacted) Error() string { return strings.ToLower(r.op) + ": " + r.err.Error() }
func (r redacted) Unwrap() error { return r.err }
