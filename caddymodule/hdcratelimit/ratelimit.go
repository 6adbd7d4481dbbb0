// Package hdcratelimit is the hdc_ratelimit handler: each request counted
// against its client's limits (ratelimit.go), an upload of unknown length
// metered as it is read (metered.go), the answers under a limit and over
// it (answers.go), and its Caddyfile directive (caddyfile.go). The
// counting is the hdc app's (edge.App.RateLimiter): its global option's
// rate_limits configure it once for every hdc_ratelimit of a config, and
// the app holds the engine, its Redis connection and the fleet's follower
// for the config's life. So the engines (package ratelimit) stand below
// the app, and this handler, which reads the app, above it.
package hdcratelimit

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/caddymodule/edge"
	"github.com/health-data-connect/hdc/caddymodule/ratelimit"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

func init() {
	caddy.RegisterModule(RateLimit{})
}

// RateLimit is the hdc_ratelimit handler: it counts a request against its
// client's limits for the route's class, right after hdc_auth named the
// client and before the body is read, decrypted or sent on. Over the rate
// it answers 429 rate_limited; an upload whose declared length would pass
// the client's daily quota, 429 quota_exceeded. An upload that declares no
// length (HTTP/1.1 chunked, HTTP/2 or HTTP/3 without content-length) is
// counted as its body is read (metered.go) and answered 429 quota_exceeded
// once its bytes would pass the quota: hdc_jwe, which reads an envelope
// whole before anything of it goes on, and hdc_forward, which reads such a
// body whole before reverse_proxy sends it, hand that failure back here,
// and the backend gets nothing of the upload. Every answer under a limit
// carries the RateLimit-Policy and RateLimit fields of
// draft-ietf-httpapi-ratelimit-headers-11.
//
// The login class counts per source address (no client is known before
// the login) and, where hdc_auth knows the client (refresh), per client
// too; the others per client.
type RateLimit struct {
	// Class is the route's class; ByMethod instead counts GET and HEAD
	// requests as reads and the others as writes (a route that lists
	// and changes).
	Class    contract.RouteClass `json:"class,omitempty"`
	ByMethod bool                `json:"by_method,omitempty"`

	app    *edge.App
	engine ratelimit.Engine // the app's
	logger *zap.Logger
	// logged are the clients whose refusal was logged lately: one line
	// per client per logEvery, however many requests it makes.
	logged *expirable.LRU[string, struct{}]
}

// logEvery is how often a client that stays over its limit is logged.
const logEvery = time.Minute

// CaddyModule returns the Caddy module information.
func (RateLimit) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.hdc_ratelimit",
		New: func() caddy.Module { return new(RateLimit) },
	}
}

// Provision fetches the limits and their counting from the hdc app.
func (h *RateLimit) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	if !slices.Contains(contract.RouteClasses, h.Class) && !h.ByMethod {
		return fmt.Errorf("hdc_ratelimit: the class must be one of %v, or by_method", contract.RouteClasses)
	}
	app, err := edge.AppOf(ctx)
	if err != nil {
		return err
	}
	h.app, h.engine = app, app.RateLimiter()
	h.logged = expirable.NewLRU[string, struct{}](10_000, nil, logEvery)
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *RateLimit) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	client := edge.ClientID(r)
	limits := h.app.Limits(client)
	class := h.classOf(r)
	var a answer
	if rate := limits.Rates[class]; !ratelimit.Unlimited(rate) {
		res := h.allow(r.Context(), h.keys(r, class, client), rate)
		a.add(ratelimit.RatePolicy(string(class), rate), int64(res.Remaining), res.ResetAfter)
		if !res.Allowed {
			a.write(w)
			p, retry := rateLimited(class, rate, res)
			h.refuse(w, r, client, class, p, retry, "rate")
			return nil
		}
	}
	if quota := limits.UploadBytesPerDay; class == contract.ClassUploads && quota > 0 && client != "" {
		switch {
		case r.ContentLength < 0:
			return h.serveMetered(w, r, next, &a, client, class, quota)
		case r.ContentLength > 0 && !h.spend(w, r, &a, client, class, quota):
			return nil
		}
	}
	a.write(w)
	return next.ServeHTTP(w, r)
}

// spend counts an upload's declared length against its client's quota,
// before anything of its body is read, and answers 429 quota_exceeded when
// it would pass it. It reports whether the upload goes on.
func (h *RateLimit) spend(w http.ResponseWriter, r *http.Request, a *answer, client string, class contract.RouteClass, quota int64) bool {
	n := r.ContentLength
	spent, err := h.engine.Reserve(r.Context(), "c:"+client, quota, n, n)
	if err != nil { // memory and the fleet never fail; a failure lets the upload pass
		h.logger.Warn("counting an upload against its quota failed; let through", zap.Error(err))
		spent.Allowed = true
	}
	a.add(ratelimit.QuotaPolicy(uploadBytes, quota), spent.Remaining, spent.ResetAfter)
	if !spent.Allowed {
		a.write(w)
		p, retry := quotaExceeded(quota, n, spent)
		h.refuse(w, r, client, class, p, retry, "quota")
	}
	return spent.Allowed
}

// uploadBytes names the daily quota of upload bytes in the fields.
const uploadBytes = "upload-bytes"

// classOf is the class r counts in.
func (h *RateLimit) classOf(r *http.Request) contract.RouteClass {
	if !h.ByMethod {
		return h.Class
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return contract.ClassReads
	}
	return contract.ClassWrites
}

// keys are the counters a request of class spends: its client's, and on
// login (or without a client) its source address's.
func (h *RateLimit) keys(r *http.Request, class contract.RouteClass, client string) []string {
	var keys []string
	if client != "" {
		keys = append(keys, "c:"+client+":"+string(class))
	}
	if class == contract.ClassLogin || client == "" {
		keys = append(keys, "a:"+edge.Field(r.Header, contract.HeaderClientIP)+":"+string(class))
	}
	return keys
}

// allow counts the request on every key and returns the tightest result.
// A key refused ends the count: the others are not spent.
func (h *RateLimit) allow(ctx context.Context, keys []string, rate contract.Rate) ratelimit.Result {
	var tightest ratelimit.Result
	for i, k := range keys {
		res, err := h.engine.Allow(ctx, k, rate)
		if err != nil { // memory and the fleet never fail; a failure lets the request pass
			h.logger.Warn("counting a request against its rate failed; let through", zap.Error(err))
			res = ratelimit.Result{Allowed: true, Remaining: rate.Burst}
		}
		if i == 0 || !res.Allowed || res.Remaining < tightest.Remaining {
			tightest = res
		}
		if !res.Allowed {
			break
		}
	}
	return tightest
}

// refuse answers p with Retry-After retry seconds, counts the refusal by class and reason, and logs the
// client (or the source) once per logEvery.
func (h *RateLimit) refuse(w http.ResponseWriter, r *http.Request, client string, class contract.RouteClass, p *problem.Problem, retry int64, reason string) {
	edge.Metrics.RateLimited.WithLabelValues(string(class), reason).Inc()
	who := client
	if who == "" {
		who = edge.Field(r.Header, contract.HeaderClientIP)
	}
	if !h.logged.Contains(who) {
		h.logged.Add(who, struct{}{})
		h.logger.Info("client over its limit; refusing its requests of the class (logged once a minute while it lasts)",
			zap.String("client", client), zap.String("source", edge.Field(r.Header, contract.HeaderClientIP)),
			zap.String("class", string(class)), zap.String("reason", reason))
	}
	w.Header().Set("Retry-After", strconv.FormatInt(retry, 10))
	if r.ProtoMajor == 1 && r.ContentLength != 0 {
		// The body stays unread: net/http would otherwise read up to
		// 256 KiB of it, waiting for a client that waits for the answer
		// (Expect: 100-continue), before answering.
		w.Header().Set("Connection", "close")
	}
	problem.Write(w, p)
}
