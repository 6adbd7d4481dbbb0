package backend

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"go.uber.org/zap"
)

// A Setting is one configuration setting of the backend: its flag, the
// environment variables that set it when the flag is not given, and the
// value it sets.
type Setting struct {
	// Flag is the long flag's name, without its dashes.
	Flag string
	// Env are the environment variables read when the flag is not given:
	// the first one set to a non-empty value wins (an empty variable
	// counts as unset).
	Env []string
	// Usage describes the setting in --help.
	Usage string
	// Value reads and shows the setting: a field of the Config that
	// Config.Settings was called on, or the logger's level. Its String is
	// the default that --help and docs/configuration.md show.
	Value pflag.Value
}

// Settings is the table of the backend's settings: hdc-backend makes its
// flags from it and reads its environment through it, and the
// configuration reference, docs/configuration.md, lists it (a test holds
// the two together).
type Settings []Setting

// setting is a row of the table.
func setting(flag string, v pflag.Value, usage string, env ...string) Setting {
	return Setting{Flag: flag, Env: env, Usage: usage, Value: v}
}

// Settings returns the table of c's settings, their values c's fields.
// With a level it ends with --log-level (HDC_LOG_LEVEL), the level of the
// logger the caller gives New; hdc up, which has a log level of its own,
// passes nil. Settings that only code sets (login throttling, secret
// hashing, the shutdown timeout) have no row.
func (c *Config) Settings(level *zap.AtomicLevel) Settings {
	s := Settings{
		setting("listen", (*stringValue)(&c.Listen), "public listen `address` (host:port, or fd/N for an inherited socket), for the edge only", "HDC_LISTEN"),
		setting("internal-listen", (*stringValue)(&c.InternalListen), "internal listen `address`: JWKS (edge), events ingress (publisher), parser results (parser), metrics (scraper), health (anyone); each role's client certificate required with the hop's TLS, loopback without it unless --internal-listen-non-loopback", "HDC_INTERNAL_LISTEN"),
		setting("internal-listen-non-loopback", (*boolValue)(&c.InternalListenNonLoopback), "allow an internal listen address beyond loopback without the hop's TLS, so without authentication; firewall it to trusted peers", "HDC_INTERNAL_LISTEN_NON_LOOPBACK"),
		setting("hop-ca", (*stringValue)(&c.HopCA), "the hop's mutual TLS (hdc tls init makes its files; required beyond loopback): PEM `file` of the authority whose client certificates both listeners require", "HDC_HOP_CA"),
		setting("hop-cert", (*stringValue)(&c.HopCert), "PEM `file` of this backend's certificate for the hop", "HDC_HOP_CERT"),
		setting("hop-key", (*stringValue)(&c.HopKey), "PEM `file` of this backend's private key for the hop", "HDC_HOP_KEY"),
		setting("data", (*stringValue)(&c.DataDir), "data `directory`: SQLite database, blobs, upload staging", "HDC_DATA"),
		setting("db", (*stringValue)(&c.DatabaseURL), "database `url`: a SQLite path, or postgres://… (default SQLite <data>/hdc.db)", "HDC_DATABASE_URL"),
		setting("keeper", (*stringValue)(&c.Keeper), "keeper `url` wrapping the data key that seals every secret the store keeps: awskms://…, gcpkms://…, azurekeyvault://…, hashivault://…, keyfile:///path, base64key://… (required)", "HDC_KEEPER"),
		setting("blob", (*stringValue)(&c.BlobURL), "blob store `url`: a directory, or s3://bucket/prefix[?endpoint=…&region=…&path_style=true] (default <data>/blobs)", "HDC_BLOB_URL"),
		setting("access-token-ttl", (*durationValue)(&c.AccessTokenTTL), "access token lifetime, seconds or a duration such as 30m", "HDC_ACCESS_TOKEN_TTL"),
		setting("refresh-token-ttl", (*durationValue)(&c.RefreshTokenTTL), "refresh token lifetime", "HDC_REFRESH_TOKEN_TTL"),
		setting("signing-key-rotation", (*durationValue)(&c.SigningKeyRotation), "signing key lifetime; each is published 10 minutes before use", "HDC_SIGNING_KEY_ROTATION"),
		setting("issuer", (*stringValue)(&c.Issuer), "access tokens' issuer (iss)", "HDC_ISSUER"),
		setting("audience", (*stringValue)(&c.Audience), "access tokens' audience (aud)", "HDC_AUDIENCE"),
		setting("upload-limit", (*sizeValue)(&c.UploadLimit), "largest uploaded file, bytes or a size such as 32MiB", "HDC_UPLOAD_LIMIT"),
		setting("sqs-endpoint", (*stringValue)(&c.SQSEndpoint), "SQS-compatible service `url` whose queue URLs subscriptions may use besides AWS's", "AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL"),
		setting("webhook-workers", (*intValue)(&c.WebhookWorkers), "webhook delivery attempts at once in this process", "HDC_WEBHOOK_WORKERS"),
		setting("webhook-workspace-concurrency", (*intValue)(&c.WebhookWorkspaceConcurrency), "attempts of one workspace at once, all processes together; below the workers", "HDC_WEBHOOK_WORKSPACE_CONCURRENCY"),
		setting("webhook-poll-interval", (*durationValue)(&c.WebhookPollInterval), "how often idle delivery workers look for due deliveries", "HDC_WEBHOOK_POLL_INTERVAL"),
		setting("webhook-timeout", (*durationValue)(&c.WebhookTimeout), "timeout of one delivery attempt", "HDC_WEBHOOK_TIMEOUT"),
		setting("webhook-connect-timeout", (*durationValue)(&c.WebhookConnectTimeout), "timeout of connecting to a subscriber, TLS handshake included", "HDC_WEBHOOK_CONNECT_TIMEOUT"),
		setting("webhook-lease", (*durationValue)(&c.WebhookLease), "how long a claimed delivery belongs to this process; longer than the timeout", "HDC_WEBHOOK_LEASE"),
		setting("webhook-backoff-base", (*durationValue)(&c.WebhookBackoffBase), "delay after the first failed attempt, doubled after each, with jitter", "HDC_WEBHOOK_BACKOFF_BASE"),
		setting("webhook-backoff-max", (*durationValue)(&c.WebhookBackoffMax), "longest delay between attempts", "HDC_WEBHOOK_BACKOFF_MAX"),
		setting("webhook-give-up-after", (*durationValue)(&c.WebhookGiveUpAfter), "age of an event at which its deliveries are given up", "HDC_WEBHOOK_GIVE_UP_AFTER"),
		setting("webhook-retention", (*durationValue)(&c.WebhookRetention), "how long finished deliveries and their events are kept; 0 keeps them", "HDC_WEBHOOK_RETENTION"),
		setting("webhook-keep-response-body", (*boolValue)(&c.WebhookKeepResponseBody), "keep the first KiB of each endpoint's answer for the delivery log", "HDC_WEBHOOK_KEEP_RESPONSE_BODY"),
		setting("webhook-key-grace", (*durationValue)(&c.WebhookKeyGrace), "how long after a signing-key rotation deliveries also carry the previous key's signature", "HDC_WEBHOOK_KEY_GRACE"),
		setting("webhook-attempt-retention", (*durationValue)(&c.WebhookAttemptRetention), "how long delivery attempts and their answer excerpts are kept; 0 keeps them as long as their delivery", "HDC_WEBHOOK_ATTEMPT_RETENTION"),
		setting("webhook-disable-after", (*durationValue)(&c.WebhookDisableAfter), "how long all of a subscription's attempts may fail before it is disabled; 0 never disables (a 410 always does)", "HDC_WEBHOOK_DISABLE_AFTER"),
		setting("webhook-allow-nets", (*prefixList)(&c.WebhookAllowNets), "comma-separated loopback prefixes every workspace's webhooks may reach despite the SSRF guard, such as 127.0.0.0/8,::1, for a receiver on this machine; a private network's receivers are granted per workspace (hdc subscriptions destinations grant)", "HDC_WEBHOOK_ALLOW_NETS"),
		setting("webhook-refused-destinations", (*destinationList)(&c.WebhookRefusedDestinations), "comma-separated listeners of the gateway no webhook may reach, whatever the allow-list or a grant says: the edges' sites and metrics, the other backends' listeners, as ADDRESS:PORT, ADDRESS or PREFIX (every port), such as 10.0.0.21,10.0.0.22:9180", "HDC_WEBHOOK_REFUSED_DESTINATIONS"),
		setting("webhook-aws-accounts", (*accountList)(&c.WebhookAWSAccounts), "comma-separated AWS account ids whose SQS queues and Lambda functions subscriptions may name; none by default, which turns both protocols off", "HDC_WEBHOOK_AWS_ACCOUNTS"),
		setting("webhook-max-subscriptions", (*intValue)(&c.WebhookMaxSubscriptions), "most webhook subscriptions a workspace may have", "HDC_WEBHOOK_MAX_SUBSCRIPTIONS"),
		setting("audit-retention", (*durationValue)(&c.AuditRetention), "how long audit records are kept (default 6 years); 0 keeps them", "HDC_AUDIT_RETENTION"),
		setting("audit-refusal-window", (*durationValue)(&c.AuditRefusalWindow), "window in which repeated refusals of one kind, from one source and actor, are recorded once with their count (the first at once); 0 records each", "HDC_AUDIT_REFUSAL_WINDOW"),
		setting("audit-checkpoints", (*stringValue)(&c.AuditCheckpoints), "where the audit trails' heads are checkpointed, signed: log, or a bucket `url` such as file:///dir or s3://bucket[?endpoint=…&region=…&path_style=true]", "HDC_AUDIT_CHECKPOINTS"),
		setting("audit-checkpoint-interval", (*durationValue)(&c.AuditCheckpointInterval), "how often the audit trails' heads are checkpointed when they changed (and when the backend stops)", "HDC_AUDIT_CHECKPOINT_INTERVAL"),
		setting("fleet-forget-after", (*durationValue)(&c.FleetForgetAfter), "how long a backend or an edge not heard from stays in the fleet's view (hdc fleet, the console), at least 15s; set the same on every backend", "HDC_FLEET_FORGET_AFTER"),
	}
	if level != nil {
		s = append(s, setting("log-level", levelValue{level}, "log level: debug, info, warn or error; no level logs a credential", "HDC_LOG_LEVEL"))
	}
	return s
}

// Define defines on fs a flag for each setting, whose usage names its
// environment variables. Parse fs, then call LoadEnv with it.
func (s Settings) Define(fs *pflag.FlagSet) {
	for _, st := range s {
		f := fs.VarPF(st.Value, st.Flag, "", st.Usage+" (env "+strings.Join(st.Env, ", else ")+")")
		if b, ok := st.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			f.NoOptDefVal = "true"
		}
	}
}

// LoadEnv sets each setting whose flag fs did not parse (each one, with a
// nil fs) from the first of its environment variables lookup finds not
// empty. Its error names the variable.
func (s Settings) LoadEnv(fs *pflag.FlagSet, lookup func(string) (string, bool)) error {
	for _, st := range s {
		if fs != nil && fs.Changed(st.Flag) {
			continue
		}
		for _, name := range st.Env {
			v, ok := lookup(name)
			if !ok || v == "" {
				continue
			}
			if err := st.Value.Set(v); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			break
		}
	}
	return nil
}

// LoadEnv sets c's settings from the environment variables lookup finds
// (os.LookupEnv), as hdc-backend does for the flags it is not given; hdc
// up starts from it.
func (c *Config) LoadEnv(lookup func(string) (string, bool)) error {
	return c.Settings(nil).LoadEnv(nil, lookup)
}

// named names how an operator sets the setting of flag: "--db
// (HDC_DATABASE_URL)", for errors.
func named(flag string) string {
	for _, s := range (&Config{}).Settings(nil) {
		if s.Flag == flag {
			return fmt.Sprintf("--%s (%s)", flag, strings.Join(s.Env, ", else "))
		}
	}
	return "--" + flag
}

// Only returns the settings of the flags named, in the table's order: the
// ones another command (hdc up) shares with hdc-backend.
func (s Settings) Only(flags ...string) Settings {
	var out Settings
	for _, st := range s {
		if slices.Contains(flags, st.Flag) {
			out = append(out, st)
		}
	}
	return out
}
