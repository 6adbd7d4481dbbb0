package hdcratelimit

import (
	"context"
	"io"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/caddymodule/edge"
	"github.com/health-data-connect/hdc/caddymodule/ratelimit"
	"github.com/health-data-connect/hdc/internal/contract"
)

// meteredBody is the body of an upload of unknown length, counted against
// its client's daily quota as it is read. Once its bytes would pass the
// quota, Read returns edge.ErrQuotaPassed and none of them, and reads nothing
// more from the client. It is never streamed to the backend, which would
// get a body cut short: hdc_forward reads it whole first.
type meteredBody struct {
	io.ReadCloser
	ctx    context.Context
	meter  *ratelimit.Meter
	logger *zap.Logger
}

// Read implements io.Reader.
func (b *meteredBody) Read(p []byte) (int, error) {
	if b.meter.Passed() {
		return 0, edge.ErrQuotaPassed
	}
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		ok, merr := b.meter.Add(b.ctx, int64(n))
		if merr != nil { // memory and the fleet never fail; a failure lets the bytes pass
			b.logger.Warn("counting an upload against its quota failed; let through", zap.Error(merr))
		}
		if !ok {
			return 0, edge.ErrQuotaPassed
		}
	}
	return n, err
}

// serveMetered serves an upload of unknown length with its body counted
// against its client's quota as it is read: refused at once when nothing
// is left of the quota, else answered 429 quota_exceeded when a handler
// below fails on a read that would pass it. The bytes read stay counted,
// refused or not; what the meter reserved and did not use is given back.
// The fields of an answer it lets through say what was left when the
// upload began.
func (h *RateLimit) serveMetered(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, a *answer, client string, class contract.RouteClass, quota int64) error {
	ctx := context.WithoutCancel(r.Context()) // what was reserved goes back after a client that left too
	m := ratelimit.NewMeter(h.engine, "c:"+client, quota)
	start, err := m.Start(ctx)
	if err != nil { // memory and the fleet never fail; a failure lets the upload pass
		h.logger.Warn("counting an upload against its quota failed; let through", zap.Error(err))
	}
	a.add(ratelimit.QuotaPolicy(uploadBytes, quota), start.Remaining+start.Granted, start.ResetAfter)
	if m.Passed() {
		a.write(w)
		p, retry := quotaPassed(quota, 0, start)
		h.refuse(w, r, client, class, p, retry, "quota")
		return nil
	}
	a.write(w)
	r.Body = &meteredBody{ReadCloser: r.Body, ctx: ctx, meter: m, logger: h.logger}
	err = next.ServeHTTP(w, r)
	end, rerr := m.Close(ctx)
	if rerr != nil {
		h.logger.Warn("giving back the unused part of an upload's reservation failed", zap.Error(rerr))
	}
	if err == nil || !m.Passed() {
		return err
	}
	a.restate(end.Remaining, end.ResetAfter)
	a.write(w)
	p, retry := quotaPassed(quota, m.Counted(), end)
	h.refuse(w, r, client, class, p, retry, "quota")
	return nil
}
