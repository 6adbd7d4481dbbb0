package backend

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/health-data-connect/hdc/backend/audit/checkpoint"
	"github.com/health-data-connect/hdc/backend/audit/retention"
	"github.com/health-data-connect/hdc/backend/audit/window"
	"github.com/health-data-connect/hdc/backend/fleet"
	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/backend/webhook/delivery"
)

// Config configures a Server. Start from DefaultConfig; the table of
// Settings names the flag and the environment variable of each field an
// operator sets, and hdc-backend reads them through it (flags win).
type Config struct {
	// Listen is the public address (spec routes only; put it behind the
	// edge).
	Listen string
	// InternalListen is the internal address: JWKS, parser results, health,
	// metrics. It has no authentication, so it must be a loopback address
	// unless InternalListenNonLoopback is set.
	InternalListen string
	// InternalListenNonLoopback lets InternalListen be another address than
	// loopback. Set it only when the network lets no one but the edge,
	// parsers, event publishers and monitoring reach that address.
	InternalListenNonLoopback bool
	// DataDir holds the SQLite database and the blob directory by default,
	// and uploads being sent to an S3 blob store.
	DataDir string
	// DatabaseURL selects the store: empty for SQLite at DataDir/hdc.db, a
	// path or sqlite:<path> for another SQLite file, postgres://… for
	// PostgreSQL, which several replicas may share (see OpenStore).
	DatabaseURL string
	// Keeper is the URL of the keeper that wraps the store's data key, under
	// which every secret the store keeps is sealed (package keeper,
	// package sealed): awskms://…, gcpkms://…, azurekeyvault://…,
	// hashivault://…, keyfile:///path, base64key://…. Required.
	Keeper string
	// BlobURL selects the blob store: empty for the directory
	// DataDir/blobs, a path for another directory, s3://bucket/prefix for
	// an S3 bucket (?endpoint=…&region=…&path_style=true for an
	// S3-compatible service), which several replicas may share (see
	// OpenBlobs).
	BlobURL string
	// HopCA, HopCert and HopKey are the PEM files of the edge–backend hop's
	// mutual TLS (hdc tls init makes them): the authority whose edge
	// certificates the public listener requires, and this backend's server
	// certificate and key. Without them the public listener is plain HTTP,
	// which only a loopback address may be.
	HopCA, HopCert, HopKey string
	// AccessTokenTTL and RefreshTokenTTL are the token lifetimes.
	AccessTokenTTL  time.Duration
	RefreshTokenTTL time.Duration
	// SigningKeyRotation is the age at which the token signing key is
	// replaced; its successor is published 10 minutes earlier, so it must
	// be longer than that.
	SigningKeyRotation time.Duration
	// UploadLimit is the largest uploaded file in bytes, at most
	// math.MaxInt32 (FHIR's Attachment.size is an unsignedInt).
	UploadLimit int64
	// Issuer and Audience are the access tokens' iss and aud.
	Issuer   string
	Audience string
	// SQSEndpoint is the base URL of an SQS-compatible service whose queue
	// URLs subscriptions may use besides AWS's; hdc-backend reads the
	// standard AWS variable AWS_ENDPOINT_URL_SQS, else AWS_ENDPOINT_URL.
	SQSEndpoint string
	// LoginFailuresPerClient and LoginFailuresPerAddress are the failed
	// logins allowed per LoginFailureWindow for one client id from one
	// source address, and for one source address, before answering 429.
	LoginFailuresPerClient  int
	LoginFailuresPerAddress int
	LoginFailureWindow      time.Duration
	// ShutdownTimeout bounds the graceful shutdown of Serve.
	ShutdownTimeout time.Duration

	// WebhookWorkers is how many webhook deliveries this process attempts
	// at once.
	WebhookWorkers int
	// WebhookWorkspaceConcurrency is how many deliveries of one workspace
	// are attempted at once, by all processes together; below
	// WebhookWorkers, so that one workspace's slow subscribers never hold
	// every worker.
	WebhookWorkspaceConcurrency int
	// WebhookPollInterval is how often an idle delivery dispatcher looks
	// for due deliveries (events published to this process wake it at
	// once).
	WebhookPollInterval time.Duration
	// WebhookTimeout bounds one delivery attempt.
	WebhookTimeout time.Duration
	// WebhookConnectTimeout bounds connecting to a subscriber, TLS
	// handshake included, within WebhookTimeout.
	WebhookConnectTimeout time.Duration
	// WebhookLease is how long a claimed delivery belongs to this process
	// before another may claim it; it must exceed WebhookTimeout.
	WebhookLease time.Duration
	// WebhookBackoffBase and WebhookBackoffMax shape the retry delays: the
	// base doubles after each failed attempt up to the max (which also caps
	// a subscriber's Retry-After), with jitter.
	WebhookBackoffBase time.Duration
	WebhookBackoffMax  time.Duration
	// WebhookGiveUpAfter is how long after its event a delivery is given
	// up.
	WebhookGiveUpAfter time.Duration
	// WebhookRetention is how long finished deliveries and their events are
	// kept; 0 keeps them.
	WebhookRetention time.Duration
	// WebhookKeepResponseBody: each attempt keeps the first KiB of the
	// endpoint's answer, which the delivery log shows its client.
	WebhookKeepResponseBody bool
	// WebhookKeyGrace is how long after a signing-key rotation deliveries
	// also carry the previous key's signature.
	WebhookKeyGrace time.Duration
	// WebhookAttemptRetention is how long delivery attempts and their
	// answer excerpts are kept; 0 keeps them as long as their delivery.
	WebhookAttemptRetention time.Duration
	// WebhookDisableAfter disables a subscription whose attempts have all
	// failed for that long; 0 never does.
	WebhookDisableAfter time.Duration
	// WebhookAllowNets are loopback prefixes that every workspace's
	// webhooks may reach although the SSRF guard refuses them by default:
	// hdc up's demo, a receiver on the backend's own machine; empty in
	// production, where operators grant each workspace its own private
	// receivers (webhook.Grants, the Admin API). Only loopback is taken.
	WebhookAllowNets []netip.Prefix
	// WebhookRefusedDestinations are the gateway's own listeners that no
	// webhook may reach, whatever the allow-list or a grant says: the
	// edges' sites and metrics, the other backends' listeners. The
	// backend refuses its own listeners, and those of the fleet's
	// heartbeats, by itself; hdc up adds its edge's.
	WebhookRefusedDestinations []webhook.Destination
	// WebhookAWSAccounts are the AWS accounts whose SQS queues and Lambda
	// functions subscriptions may name (webhook.Rules.AWSAccounts); none
	// by default, which turns both protocols off.
	WebhookAWSAccounts []string
	// WebhookMaxSubscriptions is the most webhook subscriptions a
	// workspace may have.
	WebhookMaxSubscriptions int
	// AuditRetention is how long audit records are kept: a job prunes the
	// older prefix of every trail (audit.go); 0 keeps them.
	AuditRetention time.Duration
	// AuditRefusalWindow is the window in which repeated refusals of one
	// kind, from one source and actor, are recorded once with their count
	// (package audit/window); 0 records each.
	AuditRefusalWindow time.Duration
	// AuditCheckpoints is where the heads of the audit trails are
	// checkpointed, signed, outside the database (package
	// audit/checkpoint): "log", or a bucket's URL (file:///dir,
	// s3://bucket?region=…), an S3 bucket's query read as BlobURL's.
	AuditCheckpoints string
	// AuditCheckpointInterval is how often the heads are checkpointed
	// when they changed; a stopping backend checkpoints too.
	AuditCheckpointInterval time.Duration
	// FleetForgetAfter is how long a backend or an edge not heard from
	// stays in the fleet's view (package fleet), at least
	// fleet.MinForgetAfter; then the heartbeats remove its row.
	FleetForgetAfter time.Duration
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		Listen:                      "127.0.0.1:9080",
		InternalListen:              "127.0.0.1:9081",
		DataDir:                     storage.DefaultDataDir,
		AccessTokenTTL:              1800 * time.Second,
		RefreshTokenTTL:             30 * 24 * time.Hour,
		SigningKeyRotation:          30 * 24 * time.Hour,
		UploadLimit:                 32 << 20,
		Issuer:                      "health-data-connect",
		Audience:                    "health-data-connect-api",
		LoginFailuresPerClient:      10,
		LoginFailuresPerAddress:     50,
		LoginFailureWindow:          5 * time.Minute,
		ShutdownTimeout:             15 * time.Second,
		WebhookWorkers:              256,
		WebhookWorkspaceConcurrency: 32,
		WebhookPollInterval:         time.Second,
		WebhookTimeout:              15 * time.Second,
		WebhookConnectTimeout:       5 * time.Second,
		WebhookLease:                time.Minute,
		WebhookBackoffBase:          delivery.DefaultSchedule.Base,
		WebhookBackoffMax:           delivery.DefaultSchedule.Max,
		WebhookGiveUpAfter:          delivery.DefaultSchedule.Horizon,
		WebhookRetention:            7 * 24 * time.Hour,
		WebhookKeepResponseBody:     true,
		WebhookKeyGrace:             24 * time.Hour,
		WebhookAttemptRetention:     30 * 24 * time.Hour,
		WebhookDisableAfter:         5 * 24 * time.Hour,
		WebhookMaxSubscriptions:     100,
		AuditRetention:              retention.Default,
		AuditRefusalWindow:          window.Default,
		AuditCheckpoints:            checkpoint.Log,
		AuditCheckpointInterval:     5 * time.Minute,
		FleetForgetAfter:            fleet.DefaultForgetAfter,
	}
}

// validate reports the first unusable setting, naming its flag and
// environment variable (see Settings).
func (c *Config) validate() error {
	for _, check := range []func() error{c.checkPositive, c.checkTokens, c.checkFiles, c.checkWebhooks, c.checkAddrs, c.checkFleet} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// checkPositive refuses the settings that must be positive and are not.
func (c *Config) checkPositive() error {
	for _, s := range []struct {
		flag string
		ok   bool
	}{
		{"access-token-ttl", c.AccessTokenTTL > 0},
		{"refresh-token-ttl", c.RefreshTokenTTL > 0},
		{"webhook-workers", c.WebhookWorkers > 0},
		{"webhook-workspace-concurrency", c.WebhookWorkspaceConcurrency > 0},
		{"webhook-poll-interval", c.WebhookPollInterval > 0},
		{"webhook-timeout", c.WebhookTimeout > 0},
		{"webhook-connect-timeout", c.WebhookConnectTimeout > 0},
		{"webhook-backoff-base", c.WebhookBackoffBase > 0},
		{"webhook-give-up-after", c.WebhookGiveUpAfter > 0},
		{"webhook-key-grace", c.WebhookKeyGrace > 0},
		{"webhook-max-subscriptions", c.WebhookMaxSubscriptions > 0},
		{"audit-checkpoint-interval", c.AuditCheckpointInterval > 0},
	} {
		if !s.ok {
			return fmt.Errorf("%s must be positive", named(s.flag))
		}
	}
	// Only code sets these: no flag to name.
	switch {
	case c.ShutdownTimeout <= 0:
		return errors.New("the shutdown timeout must be positive")
	case c.LoginFailuresPerClient <= 0 || c.LoginFailuresPerAddress <= 0 || c.LoginFailureWindow <= 0:
		return errors.New("login throttling settings must be positive")
	}
	return nil
}

// checkFleet refuses a bound of the fleet's view under which a process
// would leave it while still current.
func (c *Config) checkFleet() error {
	if c.FleetForgetAfter < fleet.MinForgetAfter {
		return fmt.Errorf("%s must be at least %v, the time a process stays current", named("fleet-forget-after"), fleet.MinForgetAfter)
	}
	return nil
}

// checkTokens checks the settings of tokens and uploads.
func (c *Config) checkTokens() error {
	switch {
	case c.SigningKeyRotation <= keyPublishAhead:
		return fmt.Errorf("%s must be longer than %v: new signing keys are published that long before use",
			named("signing-key-rotation"), new(durationValue(keyPublishAhead)))
	case c.UploadLimit <= 0 || c.UploadLimit > math.MaxInt32:
		// FHIR's Attachment.size is an unsignedInt.
		return fmt.Errorf("%s must be between 1 and %d bytes, not %v", named("upload-limit"), math.MaxInt32, new(sizeValue(c.UploadLimit)))
	case c.Issuer == "":
		return fmt.Errorf("%s must not be empty", named("issuer"))
	case c.Audience == "":
		return fmt.Errorf("%s must not be empty", named("audience"))
	}
	if c.SQSEndpoint != "" {
		u, err := url.Parse(c.SQSEndpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return fmt.Errorf("%s %q is not an http(s) URL", named("sqs-endpoint"), c.SQSEndpoint)
		}
	}
	return nil
}

// checkFiles checks the settings naming files and directories; New finds
// out whether they open.
func (c *Config) checkFiles() error {
	switch {
	case c.DataDir == "":
		return fmt.Errorf("%s must not be empty", named("data"))
	case c.Keeper == "":
		return fmt.Errorf("%s is required: it wraps the data key that seals every secret the store keeps "+
			"(keyfile:///path for a local key, awskms://… and the like for a KMS)", named("keeper"))
	case c.AuditCheckpoints == "":
		return fmt.Errorf("%s must not be empty: log, or a bucket URL", named("audit-checkpoints"))
	case (c.HopCA == "") != (c.HopCert == "") || (c.HopCA == "") != (c.HopKey == ""):
		return fmt.Errorf("the hop's mutual TLS needs all of %s, %s and %s, or none",
			named("hop-ca"), named("hop-cert"), named("hop-key"))
	}
	return nil
}

// checkWebhooks checks how the webhook delivery settings fit together
// (delivery.New checks them again).
func (c *Config) checkWebhooks() error {
	switch {
	case c.WebhookWorkers > 1 && c.WebhookWorkspaceConcurrency >= c.WebhookWorkers:
		return fmt.Errorf("%s must be below %s, or one workspace's slow subscribers could hold every worker; they are %d and %d",
			named("webhook-workspace-concurrency"), named("webhook-workers"), c.WebhookWorkspaceConcurrency, c.WebhookWorkers)
	case c.WebhookLease <= c.WebhookTimeout:
		return fmt.Errorf("%s must be longer than %s; they are %v and %v", named("webhook-lease"), named("webhook-timeout"),
			new(durationValue(c.WebhookLease)), new(durationValue(c.WebhookTimeout)))
	case c.WebhookBackoffMax < c.WebhookBackoffBase:
		return fmt.Errorf("%s must not be below %s; they are %v and %v", named("webhook-backoff-max"), named("webhook-backoff-base"),
			new(durationValue(c.WebhookBackoffMax)), new(durationValue(c.WebhookBackoffBase)))
	case c.WebhookRetention < 0:
		return fmt.Errorf("%s must not be negative (0 keeps them)", named("webhook-retention"))
	case c.WebhookAttemptRetention < 0:
		return fmt.Errorf("%s must not be negative (0 keeps them)", named("webhook-attempt-retention"))
	case c.WebhookDisableAfter < 0:
		return fmt.Errorf("%s must not be negative (0 never disables)", named("webhook-disable-after"))
	case c.AuditRetention < 0:
		return fmt.Errorf("%s must not be negative (0 keeps them)", named("audit-retention"))
	case c.AuditRefusalWindow < 0:
		return fmt.Errorf("%s must not be negative (0 records each refusal)", named("audit-refusal-window"))
	}
	for _, p := range c.WebhookAllowNets {
		if !slices.ContainsFunc(loopbackNets, func(q netip.Prefix) bool { return q.Bits() <= p.Bits() && q.Contains(p.Addr()) }) {
			return fmt.Errorf("%s: %s is not loopback; the allow-list admits a receiver on the backend's own machine to every workspace, "+
				"while a private network's receivers are granted to their workspace (hdc subscriptions destinations grant)",
				named("webhook-allow-nets"), p)
		}
	}
	return nil
}

// loopbackNets are the prefixes an allow-list may hold.
var loopbackNets = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// checkAddrs checks the listen addresses: their syntax, then what they
// would expose.
func (c *Config) checkAddrs() error {
	for _, a := range []struct{ flag, addr string }{{"listen", c.Listen}, {"internal-listen", c.InternalListen}} {
		if n, ok := strings.CutPrefix(a.addr, "fd/"); ok {
			if _, err := strconv.ParseUint(n, 10, 31); err != nil {
				return fmt.Errorf("%s %q: not a file descriptor number", named(a.flag), a.addr)
			}
		} else if _, _, err := net.SplitHostPort(a.addr); err != nil {
			return fmt.Errorf("%s %q: want host:port or fd/N", named(a.flag), a.addr)
		}
	}
	return c.checkExposure(c.Listen, c.InternalListen)
}

// checkExposure refuses listen addresses (host:port) that would expose
// what must stay private: the public listener beyond loopback without the
// hop's mutual TLS, the internal one beyond loopback unless allowed. An
// inherited socket (fd/N) is checked by ListenAndServe once it is open.
func (c *Config) checkExposure(public, internal string) error {
	switch {
	case !inherited(public) && c.HopCA == "" && !loopbackAddr(public):
		// Without the hop's TLS, whoever reaches the public listener can
		// act as the edge and name any client in the identity headers.
		return fmt.Errorf("%s %q is not loopback: it needs the hop's mutual TLS "+
			"(%s, %s, %s; hdc tls init makes them)", named("listen"), public, named("hop-ca"), named("hop-cert"), named("hop-key"))
	case !inherited(internal) && c.HopCA == "" && !c.InternalListenNonLoopback && !loopbackAddr(internal):
		// With the hop's TLS, every route but the health checks needs a
		// client certificate of its role.
		return fmt.Errorf("%s %q is not loopback, and without the hop's mutual TLS (%s) the internal listener has no "+
			"authentication: configure it, or set %s if only trusted peers can reach it",
			named("internal-listen"), internal, named("hop-ca"), named("internal-listen-non-loopback"))
	}
	return nil
}

// loopbackAddr reports whether the listen address addr (host:port) only
// accepts local connections: its host is a loopback IP or "localhost". An
// empty host means every interface.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// storeSetting names the setting that chose a store by its URL, url, or,
// when url is empty, by the data directory, under which it then is.
func storeSetting(url, urlFlag string) string {
	if url == "" {
		return named("data")
	}
	return named(urlFlag)
}
