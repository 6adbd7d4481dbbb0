package backend

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/health-data-connect/hdc/backend/credential"
	"github.com/health-data-connect/hdc/backend/webhook/delivery"
)

// Config configures a Server. Start from DefaultConfig, then LoadEnv, then
// RegisterFlags and parse them: flags win over the environment.
type Config struct {
	// Listen is the public address (spec routes only; put it behind the
	// edge). Env HDC_LISTEN, flag -listen.
	Listen string
	// InternalListen is the internal address: JWKS, parser results, health,
	// metrics. It has no authentication, so it must be a loopback address
	// unless InternalListenNonLoopback is set. Env HDC_INTERNAL_LISTEN, flag
	// -internal-listen.
	InternalListen string
	// InternalListenNonLoopback lets InternalListen be another address than
	// loopback. Set it only when the network lets no one but the edge,
	// parsers, event publishers and monitoring reach that address. Env
	// HDC_INTERNAL_LISTEN_NON_LOOPBACK (true or 1), flag
	// -internal-listen-non-loopback.
	InternalListenNonLoopback bool
	// DataDir holds the SQLite database and the blob directory by default,
	// and uploads being sent to an S3 blob store. Env HDC_DATA,
	// flag -data.
	DataDir string
	// DatabaseURL selects the store: empty for SQLite at DataDir/hdc.db, a
	// path or sqlite:<path> for another SQLite file, postgres://… for
	// PostgreSQL, which several replicas may share (see OpenStore). Env
	// HDC_DATABASE_URL, flag -db.
	DatabaseURL string
	// BlobURL selects the blob store: empty for the directory
	// DataDir/blobs, a path for another directory, s3://bucket/prefix for
	// an S3 bucket, which several replicas may share (see OpenBlobs). Env
	// HDC_BLOB_URL, flag -blob.
	BlobURL string
	// HopCA, HopCert and HopKey are the PEM files of the edge–backend hop's
	// mutual TLS (hdc tls init makes them): the authority whose edge
	// certificates the public listener requires, and this backend's server
	// certificate and key. Without them the public listener is plain HTTP,
	// which only a loopback address may be. Env HDC_HOP_CA, HDC_HOP_CERT,
	// HDC_HOP_KEY; flags -hop-ca, -hop-cert, -hop-key.
	HopCA, HopCert, HopKey string
	// AccessTokenTTL and RefreshTokenTTL are the token lifetimes. Env
	// HDC_ACCESS_TOKEN_TTL and HDC_REFRESH_TOKEN_TTL (seconds, or a Go
	// duration such as 30m).
	AccessTokenTTL  time.Duration
	RefreshTokenTTL time.Duration
	// SigningKeyRotation is the age at which the token signing key is
	// replaced; its successor is published 10 minutes earlier, so it must
	// be longer than that. Env HDC_SIGNING_KEY_ROTATION.
	SigningKeyRotation time.Duration
	// UploadLimit is the largest uploaded file in bytes. Env
	// HDC_UPLOAD_LIMIT (bytes, or a size such as 32MiB).
	UploadLimit int64
	// Issuer and Audience are the access tokens' iss and aud. Env
	// HDC_ISSUER and HDC_AUDIENCE.
	Issuer   string
	Audience string
	// SQSEndpoint is the base URL of an SQS-compatible service whose queue
	// URLs subscriptions may use besides AWS's; by default the standard AWS
	// variable AWS_ENDPOINT_URL_SQS, else AWS_ENDPOINT_URL.
	SQSEndpoint string
	// LoginFailuresPerClient and LoginFailuresPerAddress are the failed
	// logins allowed per LoginFailureWindow for one client id from one
	// source address, and for one source address, before answering 429.
	LoginFailuresPerClient  int
	LoginFailuresPerAddress int
	LoginFailureWindow      time.Duration
	// SecretHashing are the argon2id parameters of new client secrets.
	SecretHashing credential.Params
	// ShutdownTimeout bounds the graceful shutdown of Serve.
	ShutdownTimeout time.Duration

	// WebhookWorkers is how many webhook deliveries this process attempts
	// at once. Env HDC_WEBHOOK_WORKERS.
	WebhookWorkers int
	// WebhookWorkspaceConcurrency is how many deliveries of one workspace
	// are attempted at once, by all processes together; below
	// WebhookWorkers, so that one workspace's slow subscribers never hold
	// every worker. Env HDC_WEBHOOK_WORKSPACE_CONCURRENCY.
	WebhookWorkspaceConcurrency int
	// WebhookPollInterval is how often an idle delivery dispatcher looks
	// for due deliveries (events published to this process wake it at
	// once). Env HDC_WEBHOOK_POLL_INTERVAL.
	WebhookPollInterval time.Duration
	// WebhookTimeout bounds one delivery attempt. Env HDC_WEBHOOK_TIMEOUT.
	WebhookTimeout time.Duration
	// WebhookConnectTimeout bounds connecting to a subscriber, TLS
	// handshake included, within WebhookTimeout. Env
	// HDC_WEBHOOK_CONNECT_TIMEOUT.
	WebhookConnectTimeout time.Duration
	// WebhookLease is how long a claimed delivery belongs to this process
	// before another may claim it; it must exceed WebhookTimeout. Env
	// HDC_WEBHOOK_LEASE.
	WebhookLease time.Duration
	// WebhookBackoffBase and WebhookBackoffMax shape the retry delays: the
	// base doubles after each failed attempt up to the max (which also caps
	// a subscriber's Retry-After), with jitter. Env HDC_WEBHOOK_BACKOFF_BASE
	// and HDC_WEBHOOK_BACKOFF_MAX.
	WebhookBackoffBase time.Duration
	WebhookBackoffMax  time.Duration
	// WebhookGiveUpAfter is how long after its event a delivery is given
	// up. Env HDC_WEBHOOK_GIVE_UP_AFTER.
	WebhookGiveUpAfter time.Duration
	// WebhookRetention is how long finished deliveries and their events are
	// kept; 0 keeps them. Env HDC_WEBHOOK_RETENTION.
	WebhookRetention time.Duration
	// WebhookAllowNets are address prefixes that webhook deliveries may
	// reach although the SSRF guard refuses them by default (loopback,
	// private, link-local…); empty in production. hdc up allows loopback
	// here. Env HDC_WEBHOOK_ALLOW_NETS (comma-separated prefixes or
	// addresses), flag -webhook-allow-nets.
	WebhookAllowNets []netip.Prefix
	// WebhookMaxSubscriptions is the most webhook subscriptions a
	// workspace may have. Env HDC_WEBHOOK_MAX_SUBSCRIPTIONS, flag
	// -webhook-max-subscriptions.
	WebhookMaxSubscriptions int
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		Listen:                      "127.0.0.1:9080",
		InternalListen:              "127.0.0.1:9081",
		DataDir:                     "./data",
		AccessTokenTTL:              1800 * time.Second,
		RefreshTokenTTL:             30 * 24 * time.Hour,
		SigningKeyRotation:          30 * 24 * time.Hour,
		UploadLimit:                 32 << 20,
		Issuer:                      "health-data-connect",
		Audience:                    "health-data-connect-api",
		LoginFailuresPerClient:      10,
		LoginFailuresPerAddress:     50,
		LoginFailureWindow:          5 * time.Minute,
		SecretHashing:               credential.DefaultParams,
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
		WebhookMaxSubscriptions:     100,
	}
}

// LoadEnv sets the fields whose variables lookup finds (os.LookupEnv).
func (c *Config) LoadEnv(lookup func(string) (string, bool)) error {
	strs := map[string]*string{
		"HDC_LISTEN":          &c.Listen,
		"HDC_INTERNAL_LISTEN": &c.InternalListen,
		"HDC_DATA":            &c.DataDir,
		"HDC_DATABASE_URL":    &c.DatabaseURL,
		"HDC_BLOB_URL":        &c.BlobURL,
		"HDC_HOP_CA":          &c.HopCA,
		"HDC_HOP_CERT":        &c.HopCert,
		"HDC_HOP_KEY":         &c.HopKey,
		"HDC_ISSUER":          &c.Issuer,
		"HDC_AUDIENCE":        &c.Audience,
	}
	for name, p := range strs {
		if v, ok := lookup(name); ok {
			*p = v
		}
	}
	for _, name := range []string{"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SQS"} { // the specific one wins
		if v, ok := lookup(name); ok && v != "" {
			c.SQSEndpoint = v
		}
	}
	durations := map[string]*time.Duration{
		"HDC_ACCESS_TOKEN_TTL":        &c.AccessTokenTTL,
		"HDC_REFRESH_TOKEN_TTL":       &c.RefreshTokenTTL,
		"HDC_SIGNING_KEY_ROTATION":    &c.SigningKeyRotation,
		"HDC_WEBHOOK_POLL_INTERVAL":   &c.WebhookPollInterval,
		"HDC_WEBHOOK_TIMEOUT":         &c.WebhookTimeout,
		"HDC_WEBHOOK_CONNECT_TIMEOUT": &c.WebhookConnectTimeout,
		"HDC_WEBHOOK_LEASE":           &c.WebhookLease,
		"HDC_WEBHOOK_BACKOFF_BASE":    &c.WebhookBackoffBase,
		"HDC_WEBHOOK_BACKOFF_MAX":     &c.WebhookBackoffMax,
		"HDC_WEBHOOK_GIVE_UP_AFTER":   &c.WebhookGiveUpAfter,
		"HDC_WEBHOOK_RETENTION":       &c.WebhookRetention,
	}
	for name, p := range durations {
		if v, ok := lookup(name); ok {
			if err := (*durationValue)(p).Set(v); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	if v, ok := lookup("HDC_UPLOAD_LIMIT"); ok {
		if err := (*sizeValue)(&c.UploadLimit).Set(v); err != nil {
			return fmt.Errorf("HDC_UPLOAD_LIMIT: %w", err)
		}
	}
	ints := map[string]*int{
		"HDC_WEBHOOK_WORKERS":               &c.WebhookWorkers,
		"HDC_WEBHOOK_WORKSPACE_CONCURRENCY": &c.WebhookWorkspaceConcurrency,
		"HDC_WEBHOOK_MAX_SUBSCRIPTIONS":     &c.WebhookMaxSubscriptions,
	}
	for name, p := range ints {
		if v, ok := lookup(name); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%s: %q is not a number", name, v)
			}
			*p = n
		}
	}
	if v, ok := lookup("HDC_INTERNAL_LISTEN_NON_LOOPBACK"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("HDC_INTERNAL_LISTEN_NON_LOOPBACK: %q is not a boolean", v)
		}
		c.InternalListenNonLoopback = b
	}
	if v, ok := lookup("HDC_WEBHOOK_ALLOW_NETS"); ok {
		if err := (*prefixList)(&c.WebhookAllowNets).Set(v); err != nil {
			return fmt.Errorf("HDC_WEBHOOK_ALLOW_NETS: %w", err)
		}
	}
	return nil
}

// RegisterFlags defines flags on fs for the settings an operator changes,
// defaulting to c's current values.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Listen, "listen", c.Listen, "public listen address (env HDC_LISTEN)")
	fs.StringVar(&c.InternalListen, "internal-listen", c.InternalListen, "internal listen address, loopback unless -internal-listen-non-loopback (env HDC_INTERNAL_LISTEN)")
	fs.BoolVar(&c.InternalListenNonLoopback, "internal-listen-non-loopback", c.InternalListenNonLoopback, "allow a non-loopback internal listen address; it has no authentication, so firewall it (env HDC_INTERNAL_LISTEN_NON_LOOPBACK)")
	fs.StringVar(&c.DataDir, "data", c.DataDir, "data directory (env HDC_DATA)")
	fs.StringVar(&c.DatabaseURL, "db", c.DatabaseURL, "database URL: SQLite path or postgres://…; default SQLite <data>/hdc.db (env HDC_DATABASE_URL)")
	fs.StringVar(&c.BlobURL, "blob", c.BlobURL, "blob store: directory or s3://bucket/prefix; default <data>/blobs (env HDC_BLOB_URL)")
	fs.StringVar(&c.HopCA, "hop-ca", c.HopCA, "CA certificate (PEM) whose edge certificates the public listener requires (env HDC_HOP_CA)")
	fs.StringVar(&c.HopCert, "hop-cert", c.HopCert, "this backend's certificate (PEM) for the hop (env HDC_HOP_CERT)")
	fs.StringVar(&c.HopKey, "hop-key", c.HopKey, "this backend's private key (PEM) for the hop (env HDC_HOP_KEY)")
	fs.Var((*durationValue)(&c.AccessTokenTTL), "access-token-ttl", "access token lifetime, seconds or duration (env HDC_ACCESS_TOKEN_TTL)")
	fs.Var((*durationValue)(&c.RefreshTokenTTL), "refresh-token-ttl", "refresh token lifetime, seconds or duration (env HDC_REFRESH_TOKEN_TTL)")
	fs.Var((*durationValue)(&c.SigningKeyRotation), "signing-key-rotation", "signing key rotation interval (env HDC_SIGNING_KEY_ROTATION)")
	fs.Var((*sizeValue)(&c.UploadLimit), "upload-limit", "largest uploaded file, bytes or size such as 32MiB (env HDC_UPLOAD_LIMIT)")
	fs.StringVar(&c.Issuer, "issuer", c.Issuer, "access token issuer (env HDC_ISSUER)")
	fs.StringVar(&c.Audience, "audience", c.Audience, "access token audience (env HDC_AUDIENCE)")
	fs.StringVar(&c.SQSEndpoint, "sqs-endpoint", c.SQSEndpoint, "SQS-compatible endpoint whose queue URLs subscriptions may use (env AWS_ENDPOINT_URL_SQS)")
	fs.IntVar(&c.WebhookWorkers, "webhook-workers", c.WebhookWorkers, "webhook deliveries attempted at once (env HDC_WEBHOOK_WORKERS)")
	fs.Var((*durationValue)(&c.WebhookPollInterval), "webhook-poll-interval", "how often idle delivery workers look for due deliveries (env HDC_WEBHOOK_POLL_INTERVAL)")
	fs.IntVar(&c.WebhookWorkspaceConcurrency, "webhook-workspace-concurrency", c.WebhookWorkspaceConcurrency, "webhook deliveries of one workspace attempted at once, by all processes; below the workers (env HDC_WEBHOOK_WORKSPACE_CONCURRENCY)")
	fs.Var((*durationValue)(&c.WebhookTimeout), "webhook-timeout", "timeout of one delivery attempt (env HDC_WEBHOOK_TIMEOUT)")
	fs.Var((*durationValue)(&c.WebhookConnectTimeout), "webhook-connect-timeout", "timeout of connecting to a subscriber, TLS included (env HDC_WEBHOOK_CONNECT_TIMEOUT)")
	fs.Var((*durationValue)(&c.WebhookLease), "webhook-lease", "lease of a claimed delivery; more than the timeout (env HDC_WEBHOOK_LEASE)")
	fs.Var((*durationValue)(&c.WebhookBackoffBase), "webhook-backoff-base", "delay after the first failed attempt, doubled after each (env HDC_WEBHOOK_BACKOFF_BASE)")
	fs.Var((*durationValue)(&c.WebhookBackoffMax), "webhook-backoff-max", "longest delay between attempts (env HDC_WEBHOOK_BACKOFF_MAX)")
	fs.Var((*durationValue)(&c.WebhookGiveUpAfter), "webhook-give-up-after", "age of an event at which its deliveries are given up (env HDC_WEBHOOK_GIVE_UP_AFTER)")
	fs.Var((*durationValue)(&c.WebhookRetention), "webhook-retention", "how long finished deliveries are kept, 0 for ever (env HDC_WEBHOOK_RETENTION)")
	fs.IntVar(&c.WebhookMaxSubscriptions, "webhook-max-subscriptions", c.WebhookMaxSubscriptions, "most webhook subscriptions a workspace may have (env HDC_WEBHOOK_MAX_SUBSCRIPTIONS)")
	fs.Var((*prefixList)(&c.WebhookAllowNets), "webhook-allow-nets", "comma-separated prefixes webhook deliveries may reach despite the SSRF guard, e.g. 127.0.0.0/8,::1/128 (env HDC_WEBHOOK_ALLOW_NETS)")
}

// validate reports the first unusable setting.
func (c *Config) validate() error {
	switch {
	case c.AccessTokenTTL <= 0 || c.RefreshTokenTTL <= 0:
		return errors.New("token lifetimes must be positive")
	case c.SigningKeyRotation <= keyPublishAhead:
		return fmt.Errorf("the signing key rotation interval must be longer than %v (new keys are published that long before use)", keyPublishAhead)
	case (c.HopCA == "") != (c.HopCert == "") || (c.HopCA == "") != (c.HopKey == ""):
		return errors.New("the hop's TLS needs all of HDC_HOP_CA, HDC_HOP_CERT and HDC_HOP_KEY, or none")
	case c.ShutdownTimeout <= 0:
		return errors.New("the shutdown timeout must be positive")
	case c.WebhookMaxSubscriptions <= 0:
		return errors.New("the most webhook subscriptions per workspace must be positive")
	case c.UploadLimit <= 0 || c.UploadLimit > math.MaxInt32:
		// FHIR's Attachment.size is an unsignedInt.
		return fmt.Errorf("the upload limit must be between 1 and %d bytes", math.MaxInt32)
	case c.Issuer == "" || c.Audience == "":
		return errors.New("issuer and audience must not be empty")
	case c.LoginFailuresPerClient <= 0 || c.LoginFailuresPerAddress <= 0 || c.LoginFailureWindow <= 0:
		return errors.New("login throttling settings must be positive")
	case c.DataDir == "":
		return errors.New("the data directory must not be empty")
	}
	if err := c.checkExposure(c.Listen, c.InternalListen); err != nil {
		return err
	}
	if c.SQSEndpoint != "" {
		u, err := url.Parse(c.SQSEndpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return fmt.Errorf("the SQS endpoint must be an http(s) URL")
		}
	}
	return nil
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
		return fmt.Errorf("the public listener %q is not loopback: it needs the hop's mutual TLS (HDC_HOP_CA, HDC_HOP_CERT, HDC_HOP_KEY; hdc tls init makes them)", public)
	case !inherited(internal) && !c.InternalListenNonLoopback && !loopbackAddr(internal):
		return fmt.Errorf("the internal listener has no authentication: %q is not a loopback address (set HDC_INTERNAL_LISTEN_NON_LOOPBACK=1 if only trusted peers can reach it)", internal)
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

// durationValue is a flag.Value of a duration given in seconds ("1800") or
// as a Go duration ("30m").
type durationValue time.Duration

func (d *durationValue) String() string { return time.Duration(*d).String() }

func (d *durationValue) Set(s string) error {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > math.MaxInt64/int64(time.Second) {
			return errors.New("too long")
		}
		*d = durationValue(time.Duration(n) * time.Second)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is neither seconds nor a duration", s)
	}
	*d = durationValue(v)
	return nil
}

// prefixList is a flag.Value of comma-separated address prefixes
// ("10.1.0.0/16, 127.0.0.1"); a bare address is a one-address prefix.
type prefixList []netip.Prefix

func (l *prefixList) String() string {
	parts := make([]string, len(*l))
	for i, p := range *l {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}

func (l *prefixList) Set(s string) error {
	var out prefixList
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		p, err := netip.ParsePrefix(item)
		if err != nil {
			a, aerr := netip.ParseAddr(item)
			if aerr != nil || a.Zone() != "" {
				return fmt.Errorf("%q is neither a prefix nor an address", item)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	*l = out
	return nil
}

// sizeValue is a flag.Value of a byte size ("33554432", "32MiB", "32MB").
type sizeValue int64

func (v *sizeValue) String() string { return humanize.IBytes(uint64(*v)) }

func (v *sizeValue) Set(s string) error {
	n, err := humanize.ParseBytes(s)
	if err != nil || n > math.MaxInt64 {
		return fmt.Errorf("%q is not a size", s)
	}
	*v = sizeValue(n)
	return nil
}
