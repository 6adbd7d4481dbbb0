package backend

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/checkpoint"
	"github.com/health-data-connect/hdc/backend/audit/retention"
	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/backend/audit/window"
	"github.com/health-data-connect/hdc/backend/auth"
	"github.com/health-data-connect/hdc/backend/blob"
	"github.com/health-data-connect/hdc/backend/fleet"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/backend/keyplane"
	"github.com/health-data-connect/hdc/backend/records"
	"github.com/health-data-connect/hdc/backend/replay"
	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/token"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/backend/webhook/delivery"
)

// keyCheckInterval is how often each replica reloads the signing keys and
// rotates when due.
const keyCheckInterval = time.Minute

// tokenLeeway is the most clock skew an edge may allow on exp (the edge's
// leeway setting is at most a minute; the reference Caddyfile sets 30 s): a
// replaced signing key stays in the JWKS that much longer than the tokens
// it signed live.
const tokenLeeway = time.Minute

// keyPublishAhead is how long a new signing key is in the JWKS before it
// signs. An edge refetches the JWKS after its max age (5 minutes by
// default) and on an unknown kid at most once per cooldown (30 seconds):
// 10 minutes covers both with margin.
const keyPublishAhead = 10 * time.Minute

// The key plane's hub reads the newest change number this often while the
// store's notices flow (PostgreSQL's LISTEN; a safety net), and
// keyPlaneFastPoll while they do not (SQLite has none): a change reaches
// the edges' waiting requests within it.
const (
	keyPlanePoll     = 5 * time.Second
	keyPlaneFastPoll = 200 * time.Millisecond
)

// maxThrottleKeys bounds the memory of each login limiter.
const maxThrottleKeys = 100_000

// secretVerifications bounds concurrent argon2id verifications, of the
// client secrets earlier versions stored so (19 MiB each by default).
const secretVerifications = 4

// handlers are the services' HTTP handlers, for the route tables.
type handlers struct {
	auth     *auth.Handler
	records  *records.Handler
	webhooks *webhook.Handler
	tests    *webhook.TestEvents // the public API's and the Admin API's
	events   *webhook.Ingress
	keys     *keyplane.Handler
	limits   *keyplane.LimitsHandler
	admin    *admin.Handler
	reports  *fleet.Handler
}

// build makes the services over the open store, then the routes.
func (s *Server) build(ctx context.Context) error {
	cfg := s.cfg
	loadAWS := sync.OnceValues(func() (aws.Config, error) { return storage.LoadAWS(ctx) }) // loaded once, if needed
	blobs, err := s.openBlobs(ctx, loadAWS)
	if err != nil {
		return err
	}
	s.issuer, err = token.NewIssuer(ctx, s.store, token.Config{
		Issuer:       cfg.Issuer,
		Audience:     cfg.Audience,
		AccessTTL:    cfg.AccessTokenTTL,
		RotateEvery:  cfg.SigningKeyRotation,
		PublishAhead: keyPublishAhead,
		CheckEvery:   keyCheckInterval,
		Leeway:       tokenLeeway,
		RefreshGrace: cfg.RefreshTokenTTL,
	}, s.log.Named("token"))
	if err != nil {
		return fmt.Errorf("loading signing keys: %w", err)
	}
	s.identity = identity.New(s.store, secretVerifications)
	s.refusals = window.New(s.store, cfg.AuditRefusalWindow, s.log.Named("audit"))
	if s.checkpoints, err = s.newCheckpoints(ctx); err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var h handlers
	if h.auth, err = s.newAuth(reg); err != nil {
		return err
	}
	if h.records, err = records.New(records.Config{
		Store: s.store, Audit: s.refusals, Blobs: blobs, UploadLimit: cfg.UploadLimit, Log: s.log.Named("records"), Metrics: reg,
	}); err != nil {
		return err
	}
	if err := s.buildWebhooks(reg, loadAWS, &h); err != nil {
		return err
	}
	s.keyHub = keyplane.NewHub(s.store, keyPlanePoll, keyPlaneFastPoll, s.log.Named("keyplane"))
	if h.keys, err = keyplane.New(s.store, s.keyHub, s.log.Named("keyplane"), reg); err != nil {
		return err
	}
	h.limits = keyplane.NewLimits(s.store, s.log.Named("keyplane"))
	s.fleet, h.reports = fleet.New(s.store, cfg.FleetForgetAfter), fleet.NewHandler(s.store, s.log.Named("fleet"))
	if s.replays, err = replay.New(s.store, s.log.Named("replay"), reg); err != nil {
		return err
	}
	s.deny = admin.NewDenyList(s.store, admin.DenyListTTL)
	trails := trail.New(s.store, trail.Config{Checkpoints: cfg.AuditCheckpoints, CheckpointKey: s.store.CheckpointKey(), Retention: cfg.AuditRetention})
	h.admin = admin.NewHandler(admin.New(s.store, s.identity, keyadmin.New(s.store), admin.WithTrail(trails), admin.WithFleet(s.fleet), admin.WithGrants(s.grants),
		admin.WithTests(h.tests)),
		admin.HandlerConfig{HopTLS: s.hop != nil, Idempotency: s.store, DenyList: s.deny, Log: s.log.Named("admin")})
	if s.retention, err = retention.New(s.store, cfg.AuditRetention, s.log.Named("audit"), reg); err != nil {
		return err
	}
	if err := s.registerMetrics(reg); err != nil {
		return err
	}
	return s.routes(reg, h)
}

// headTime reads the time of the last record of a trail's head h.
func (s *Server) headTime(ctx context.Context, h audit.Head) (time.Time, error) {
	rs, err := s.store.ListAudit(ctx, store.AuditFilter{Workspace: h.Workspace, After: h.Last.Seq - 1, Limit: 1})
	if err != nil || len(rs) != 1 || rs[0].Seq != h.Last.Seq {
		return time.Time{}, cmp.Or(err, store.ErrNotFound)
	}
	return rs[0].At, nil
}

// checkpointTimeout bounds the checkpoint a stopping backend writes.
const checkpointTimeout = 10 * time.Second

// newCheckpoints makes the job that checkpoints the audit trails' heads,
// opening its destination.
func (s *Server) newCheckpoints(ctx context.Context) (*checkpoint.Job, error) {
	log := s.log.Named("audit")
	to, err := checkpoint.Open(ctx, s.cfg.AuditCheckpoints, log)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", named("audit-checkpoints"), err)
	}
	replica := make([]byte, 6)
	rand.Read(replica)
	return &checkpoint.Job{Heads: s.store, HeadTime: s.headTime, To: to, Key: s.store.CheckpointKey(), Every: s.cfg.AuditCheckpointInterval,
		Replica: hex.EncodeToString(replica), Now: time.Now, Log: log}, nil
}

// openBlobs opens the configured blob store and removes the staged files
// of uploads a stopped process left.
func (s *Server) openBlobs(ctx context.Context, loadAWS func() (aws.Config, error)) (blob.Store, error) {
	blobs, err := storage.OpenBlobs(ctx, s.cfg.BlobURL, s.cfg.DataDir, func(context.Context) (aws.Config, error) { return loadAWS() })
	if err != nil {
		return nil, fmt.Errorf("%s: opening the blob store: %w", storeSetting(s.cfg.BlobURL, "blob"), err)
	}
	switch n, err := blobs.SweepStaged(); {
	case err != nil:
		return nil, fmt.Errorf("sweeping the blob store's staged uploads: %w", err)
	case n > 0:
		s.log.Info("removed the staged files of uploads a stopped process left", zap.Int("files", n))
	}
	if s.tracing {
		return blob.Traced(blobs), nil
	}
	return blobs, nil
}

// newAuth makes the login and refresh handler.
func (s *Server) newAuth(reg prometheus.Registerer) (*auth.Handler, error) {
	cfg := s.cfg
	return auth.New(auth.Config{
		Identity:   s.identity,
		Issuer:     s.issuer,
		Tokens:     s.store,
		Audit:      s.refusals,
		Clients:    s.store,
		RefreshTTL: cfg.RefreshTokenTTL,
		ByClient:   s.loginLimiter(cfg.LoginFailuresPerClient),
		ByAddress:  s.loginLimiter(cfg.LoginFailuresPerAddress),
		Log:        s.log.Named("auth"),
		Metrics:    reg,
	})
}

// loginLimiter returns a login limiter allowing burst failures per
// Config.LoginFailureWindow. On a shared store (PostgreSQL) it counts in
// the database, so that the limit holds however a client's attempts are
// spread over the replicas. On SQLite, where one server process owns the
// database, it counts in memory, which costs no write per attempt.
func (s *Server) loginLimiter(burst int) auth.Limiter {
	if storage.Shared(s.cfg.DatabaseURL) {
		return auth.NewStoreLimiter(s.store, burst, s.cfg.LoginFailureWindow, s.log.Named("throttle"))
	}
	return auth.NewMemoryLimiter(burst, s.cfg.LoginFailureWindow, maxThrottleKeys)
}

// buildWebhooks makes the subscription handler, the delivery dispatcher and
// the events ingress.
func (s *Server) buildWebhooks(reg *prometheus.Registry, loadAWS func() (aws.Config, error), h *handlers) error {
	cfg := s.cfg
	var sqsEndpoint *url.URL
	if cfg.SQSEndpoint != "" {
		sqsEndpoint, _ = url.Parse(cfg.SQSEndpoint) // validated
	}
	s.grants = webhook.NewGrants(s.store, webhook.GrantsTTL)
	s.guard = webhook.NewGuard(webhook.GuardConfig{Allow: cfg.WebhookAllowNets, Refused: cfg.WebhookRefusedDestinations, Grants: s.grants})
	h.webhooks = webhook.NewHandler(s.store, webhook.Rules{SQSEndpoint: sqsEndpoint, Guard: s.guard, AWSAccounts: cfg.WebhookAWSAccounts},
		cfg.WebhookMaxSubscriptions, s.log.Named("webhook"))
	h.webhooks.Deliveries = webhook.NewDeliveryHandler(s.store, s.store, s.log.Named("webhook"))
	awsCfg, err := loadAWS()
	if err != nil {
		return err
	}
	s.delivery, err = delivery.New(delivery.Config{
		Store:            s.store,
		Workers:          cfg.WebhookWorkers,
		PerWorkspace:     cfg.WebhookWorkspaceConcurrency,
		PollInterval:     cfg.WebhookPollInterval,
		Timeout:          cfg.WebhookTimeout,
		ConnectTimeout:   cfg.WebhookConnectTimeout,
		Lease:            cfg.WebhookLease,
		Schedule:         delivery.Schedule{Base: cfg.WebhookBackoffBase, Max: cfg.WebhookBackoffMax, Horizon: cfg.WebhookGiveUpAfter},
		Guard:            s.guard,
		AWSAccounts:      cfg.WebhookAWSAccounts,
		AWS:              awsCfg,
		SQSEndpoint:      cfg.SQSEndpoint,
		Retention:        cfg.WebhookRetention,
		AttemptRetention: cfg.WebhookAttemptRetention,
		KeepBodies:       cfg.WebhookKeepResponseBody,
		DisableAfter:     cfg.WebhookDisableAfter,
		Log:              s.log.Named("delivery"),
		Metrics:          reg,
	})
	if err != nil {
		return err
	}
	h.webhooks.Due, h.webhooks.Deliveries.Due = s.delivery.Notify, s.delivery.Notify
	h.tests = webhook.NewTestEvents(s.store, s.store.OpenKeys, s.delivery, s.log.Named("webhook"))
	h.events, err = webhook.NewIngress(s.store, s.delivery.Notify, s.log.Named("events"), reg)
	return err
}
