// Package delivery delivers webhook events from the store's outbox to the
// subscriptions: over HTTP(S) through an SSRF guard, to SQS queues and to
// Lambda functions, signed as Standard Webhooks, at least once.
//
// Events and their deliveries are written in one transaction when an event
// is published (store.Outbox.PublishEvent). A Dispatcher claims due
// deliveries under a lease, attempts them with a bounded number of workers
// and records every attempt; a failed attempt is retried on a Schedule. Any
// number of processes may run a Dispatcher on one database: a claim is
// exclusive while its lease lasts, and the claims of a process that died
// are claimed again when their leases expire. A subscriber may therefore
// receive a message twice (never with a different webhook-id) and should
// deduplicate by webhook-id. Deliveries are not ordered: retries and
// concurrent workers reorder them, and the payload's timestamp tells when
// each event happened.
package delivery

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// storeTimeout bounds the store calls that record an attempt, which run
// even while the dispatcher shuts down.
const storeTimeout = 10 * time.Second

// pruneInterval is how often finished deliveries past the retention are
// deleted.
const pruneInterval = time.Hour

// Config configures a Dispatcher.
type Config struct {
	Store store.Outbox
	// Workers is how many attempts run at once in this process.
	Workers int
	// PerWorkspace is how many attempts of one workspace run at once, in
	// every process on the store together (store.Claim.PerWorkspace). It
	// must be below Workers, so that one workspace's slow subscribers
	// leave workers to the others.
	PerWorkspace int
	// PollInterval is how often an idle dispatcher looks for due
	// deliveries; Notify wakes it sooner.
	PollInterval time.Duration
	// Timeout bounds an attempt, the whole exchange.
	Timeout time.Duration
	// ConnectTimeout bounds connecting to an HTTP(S) subscriber, the TLS
	// handshake included.
	ConnectTimeout time.Duration
	// Lease is how long a claimed delivery stays this process's. It must
	// exceed Timeout, or another process could attempt it concurrently.
	Lease    time.Duration
	Schedule Schedule
	// Guard decides which addresses each workspace's HTTP(S) deliveries
	// may reach (nil: the SSRF rules alone).
	Guard *webhook.Guard
	// AWS configures the SQS and Lambda clients (credentials, region,
	// endpoints); see config.LoadDefaultConfig.
	AWS aws.Config
	// AWSAccounts are the AWS accounts an SQS or Lambda delivery may go
	// to (webhook.Rules.AWSAccounts): a subscription registered before
	// its account was removed is refused at delivery.
	AWSAccounts []string
	// SQSEndpoint, when set, is where every SQS call goes (an emulator, a
	// VPC endpoint); registration accepts queue URLs on its host.
	SQSEndpoint string
	// Retention is how long finished deliveries, their attempts and their
	// events are kept, and the pending deliveries of a disabled
	// subscription; 0 keeps them forever.
	Retention time.Duration
	// KeepBodies: each attempt keeps the first KiB of the answer of an
	// endpoint at a public address for the delivery log (never of one only
	// an allowance or a grant admits).
	KeepBodies bool
	// AttemptRetention is how long attempts (and their answer excerpts)
	// are kept, whatever their delivery; 0 keeps them as long as it.
	AttemptRetention time.Duration
	// DisableAfter disables a subscription whose attempts have all failed
	// for that long (store.Next.FailingFor); 0 never does.
	DisableAfter time.Duration
	// Clock, when set, is the dispatcher's clock instead of time.Now (tests).
	Clock func() time.Time
	Log   *zap.Logger
	// Metrics receives the dispatcher's metrics.
	Metrics prometheus.Registerer
}

func (c Config) validate() error {
	switch {
	case c.Store == nil || c.Log == nil || c.Metrics == nil:
		return errors.New("delivery: a store, a logger and a metrics registry are required")
	case c.Workers < 1 || c.PollInterval <= 0 || c.Timeout <= 0 || c.ConnectTimeout <= 0:
		return errors.New("delivery: workers, poll interval and timeouts must be positive")
	case c.PerWorkspace < 1 || (c.PerWorkspace >= c.Workers && c.Workers > 1):
		return fmt.Errorf("delivery: the attempts per workspace (%d) must be at least 1 and below the workers (%d), "+
			"or one workspace could hold every worker", c.PerWorkspace, c.Workers)
	case c.Lease <= c.Timeout:
		return fmt.Errorf("delivery: the lease (%v) must exceed the attempt timeout (%v)", c.Lease, c.Timeout)
	case c.Schedule.Base <= 0 || c.Schedule.Max < c.Schedule.Base || c.Schedule.Horizon <= 0:
		return errors.New("delivery: the retry schedule needs 0 < base ≤ max and a positive horizon")
	case c.Retention < 0 || c.AttemptRetention < 0 || c.DisableAfter < 0:
		return errors.New("delivery: the retentions and the disable period must not be negative")
	}
	return nil
}

// Dispatcher claims due deliveries from the outbox and attempts them.
type Dispatcher struct {
	cfg     Config
	senders map[string]sender
	metrics *metrics
	now     func() time.Time
	wake    chan struct{}
	// process and claims make the lease owner of each claim unique:
	// "<process>/<claim number>".
	process string
	claims  atomic.Uint64
}

// New returns a Dispatcher and registers its metrics.
func New(cfg Config) (*Dispatcher, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Guard == nil {
		cfg.Guard = webhook.NewGuard(webhook.GuardConfig{})
	}
	d := &Dispatcher{cfg: cfg, now: time.Now, wake: make(chan struct{}, 1), process: uuid.NewString()}
	if cfg.Clock != nil {
		d.now = cfg.Clock
	}
	h := newHTTPSender(cfg.Guard, cfg.ConnectTimeout)
	h.keepBody = cfg.KeepBodies
	d.senders = map[string]sender{
		webhook.ProtocolHTTP:   h,
		webhook.ProtocolHTTPS:  h,
		webhook.ProtocolSQS:    newSQSSender(cfg.AWS, cfg.SQSEndpoint),
		webhook.ProtocolLambda: newLambdaSender(cfg.AWS),
	}
	var err error
	if d.metrics, err = newMetrics(cfg.Metrics, cfg.Store, d.now); err != nil {
		return nil, err
	}
	return d, nil
}

// Notify tells the dispatcher that deliveries may be due, so it looks
// before its next poll. It never blocks.
func (d *Dispatcher) Notify() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx is done. Attempts in flight then are abandoned and
// their leases released, so that another process (or the next start)
// attempts them at once; Run returns when they have stopped.
func (d *Dispatcher) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	poll := time.NewTicker(d.cfg.PollInterval)
	defer poll.Stop()
	var prune <-chan time.Time
	if d.cfg.Retention > 0 || d.cfg.AttemptRetention > 0 {
		t := time.NewTicker(pruneInterval)
		defer t.Stop()
		prune = t.C
	}
	// busy counts attempts in flight; backlog is set when more deliveries
	// may be claimable than the last claim took.
	done := make(chan struct{}, d.cfg.Workers)
	busy, backlog := 0, true
	for {
		if free := d.cfg.Workers - busy; backlog && free > 0 {
			owner := d.process + "/" + strconv.FormatUint(d.claims.Add(1), 10)
			now := d.now()
			ds, err := d.cfg.Store.ClaimDeliveries(ctx, store.Claim{Owner: owner, Now: now, LeaseUntil: now.Add(d.cfg.Lease),
				Limit: free, PerWorkspace: d.cfg.PerWorkspace})
			if err != nil && ctx.Err() == nil {
				d.cfg.Log.Error("claiming webhook deliveries failed", zap.Error(err))
			}
			backlog = err == nil && len(ds) == free
			for _, dl := range ds {
				busy++
				wg.Go(func() {
					d.attempt(ctx, owner, dl)
					done <- struct{}{}
				})
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-done:
			// The attempt's workspace may have been at its cap.
			busy, backlog = busy-1, true
		case <-d.wake:
			backlog = true
		case <-poll.C:
			backlog = true
		case <-prune:
			d.prune(ctx)
		}
	}
}

// attempt makes one attempt at dl, leased to owner, and records it.
func (d *Dispatcher) attempt(ctx context.Context, owner string, dl store.Delivery) {
	protocol := dl.Subscription.Protocol
	ctx, span := startAttempt(ctx, dl)
	var r Result
	defer func() { endAttempt(span, r) }() // after the attempt is recorded, whose statements it holds
	log := telemetry.Logger(ctx, d.cfg.Log).With(zap.String("delivery_id", dl.ID), zap.String("event_id", dl.Event.ID),
		zap.String("event_type", dl.Event.Type), zap.String("workspace_id", dl.Event.WorkspaceID),
		zap.String("subscription_id", dl.Subscription.ID), zap.String("protocol", protocol),
		zap.Int("attempt", dl.Attempts+1))
	d.metrics.inFlight.Inc()
	start := d.now()
	r = d.send(ctx, dl, start)
	end := d.now()
	d.metrics.inFlight.Dec()
	// Records outlive a shutdown: they are what makes the next start
	// resume where this one stopped.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if ctx.Err() != nil && !r.Delivered {
		// Shutting down mid-attempt: not the subscriber's failure.
		if err := d.cfg.Store.ReleaseDelivery(sctx, owner, dl.ID); err != nil && !errors.Is(err, store.ErrLeaseLost) {
			log.Warn("releasing a webhook delivery failed; it is attempted again when its lease expires", zap.Error(err))
		}
		return
	}
	elapsed := end.Sub(start)
	next := d.cfg.Schedule.Next(dl, r, start, end)
	a := store.Attempt{DeliveryID: dl.ID, StartedAt: start, Duration: elapsed, Outcome: r.Outcome, StatusCode: r.StatusCode, ResponseBody: r.Body}
	var disabled string
	d.disabling(&next, dl.Subscription, end, &disabled)
	err := d.cfg.Store.FinishAttempt(sctx, owner, a, next)
	switch {
	case errors.Is(err, store.ErrLeaseLost):
		d.metrics.leasesLost.Inc()
		log.Warn("webhook attempt finished after its lease was lost", attemptFields(r, elapsed)...)
		return
	case err != nil:
		// The lease expires and the delivery is attempted again.
		log.Error("recording a webhook attempt failed", append(attemptFields(r, elapsed), zap.Error(err))...)
		return
	}
	d.metrics.observe(protocol, r, elapsed, next)
	if disabled != "" {
		d.metrics.disabled.WithLabelValues(disabled).Inc()
	}
	logAttempt(log, r, elapsed, next, disabled)
}

// logAttempt logs how an attempt that took elapsed went (r) and what
// follows it (next, and the reason it disabled its subscription for):
// one line for each attempt, at info level, a delivery included, so that
// the default level shows every attempt; at warn when the delivery ends
// undelivered or the subscription is disabled. log names the attempt
// (attempt's fields).
func logAttempt(log *zap.Logger, r Result, elapsed time.Duration, next store.Next, disabled string) {
	fields := attemptFields(r, elapsed)
	switch {
	case disabled == store.DisabledFailing:
		log.Warn("webhook attempts failed for the disable period: the subscription is disabled, its pending deliveries kept", fields...)
	case next.Status == store.DeliveryDelivered:
		log.Info("webhook delivered", fields...)
	case next.Status == store.DeliveryPending:
		log.Info("webhook attempt failed; retrying", append(fields, zap.Time("retry_at", next.RetryAt))...)
	case next.DisableSubscription:
		log.Warn("webhook subscription answered 410 Gone and is disabled", fields...)
	default:
		log.Warn("webhook delivery given up", fields...)
	}
}

// attemptFields say how an attempt that took elapsed went: its outcome
// (for a failure with no answer, its class: timeout, dns_error, …), the
// answer's status, and the failure, which a sender words without the
// endpoint or the body (sender). Never the message: its payload is the
// subscriber's, its signature made with the subscription's key.
func attemptFields(r Result, elapsed time.Duration) []zap.Field {
	fields := []zap.Field{zap.String("outcome", r.Outcome), zap.Duration("duration", elapsed)}
	if r.StatusCode != 0 {
		fields = append(fields, zap.Int("status", r.StatusCode))
	}
	if r.Err != nil {
		fields = append(fields, zap.NamedError("cause", r.Err))
	}
	return fields
}

// send builds the message of an attempt at dl started at now and sends it
// within the timeout.
func (d *Dispatcher) send(ctx context.Context, dl store.Delivery, now time.Time) Result {
	s, ok := d.senders[dl.Subscription.Protocol]
	if !ok {
		return Result{Outcome: OutcomeInvalidEndpoint, Permanent: true,
			Err: fmt.Errorf("unknown protocol %q", dl.Subscription.Protocol)}
	}
	if !webhook.AWSAccountAllowed(dl.Subscription.Protocol, dl.Subscription.Endpoint, d.cfg.AWSAccounts) {
		return Result{Outcome: OutcomeInvalidEndpoint, Permanent: true, Err: webhook.ErrAWSAccountNotAllowed}
	}
	if dl.Subscription.SigningKeyErr != nil {
		return Result{Outcome: OutcomeSigningKeyUnavailable, Permanent: true, Err: dl.Subscription.SigningKeyErr}
	}
	m, err := NewMessage(dl, now)
	if err != nil {
		return Result{Outcome: OutcomeInvalidEvent, Permanent: true, Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	return s.send(ctx, dl.Subscription, m)
}
