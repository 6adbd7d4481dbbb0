package caddymodule

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/felixge/httpsnoop"

	"github.com/health-data-connect/hdc/internal/contract"
)

// timed serves fn and observes how long the answer took, in
// hdc_edge_request_duration_seconds by route (the API path template),
// method and status. A refusal that handle_errors answers after the
// handler returned counts with its status.
func timed(w http.ResponseWriter, r *http.Request, fn func(http.ResponseWriter) error) error {
	var err error
	m := httpsnoop.CaptureMetricsFn(w, func(w http.ResponseWriter) { err = fn(w) })
	code := m.Code
	if he := (caddyhttp.HandlerError{}); errors.As(err, &he) {
		code = he.StatusCode
		if code == 0 {
			code = http.StatusInternalServerError
		}
	}
	metrics.requestDuration.WithLabelValues(contract.Route(r.URL.Path), contract.Method(r.Method), strconv.Itoa(code)).
		Observe(m.Duration.Seconds())
	return err
}
