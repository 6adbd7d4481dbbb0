package backend

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestConfigErrorsNameTheSetting: every configuration error of New and
// ListenAndServe is one line naming what to fix: the flag and its
// environment variable, and the file when a file is wrong.
func TestConfigErrorsNameTheSetting(t *testing.T) {
	dir := t.TempDir()
	hop := filepath.Join(dir, "tls")
	if err := pki.InitDir(hop, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	ca, cert, key := filepath.Join(hop, pki.CAFile), filepath.Join(hop, pki.CertFile(pki.Backend)), filepath.Join(hop, pki.KeyFile(pki.Backend))
	notPEM, missing := filepath.Join(dir, "not.pem"), filepath.Join(dir, "missing.pem")
	if err := os.WriteFile(notPEM, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	hopFiles := func(a, b, c string) func(*Config) {
		return func(cfg *Config) { cfg.HopCA, cfg.HopCert, cfg.HopKey = a, b, c }
	}
	tests := []struct {
		name   string
		mutate func(*Config)
		listen bool // the error comes from ListenAndServe
		want   []string
	}{
		{"hop certificate missing", hopFiles(ca, missing, key), false, []string{"--hop-cert", "HDC_HOP_CERT", missing}},
		{"hop certificate not PEM", hopFiles(ca, notPEM, key), false, []string{"--hop-cert", "HDC_HOP_CERT", notPEM}},
		{"hop key missing", hopFiles(ca, cert, missing), false, []string{"--hop-key", "HDC_HOP_KEY", missing}},
		{"hop key not PEM", hopFiles(ca, cert, notPEM), false, []string{"--hop-key", "HDC_HOP_KEY", notPEM}},
		{"hop key of another certificate", hopFiles(ca, cert, filepath.Join(hop, pki.KeyFile(pki.Edge))), false,
			[]string{"--hop-cert", "--hop-key", cert}},
		{"hop CA missing", hopFiles(missing, cert, key), false, []string{"--hop-ca", "HDC_HOP_CA", missing}},
		{"hop CA not PEM", hopFiles(notPEM, cert, key), false, []string{"--hop-ca", "HDC_HOP_CA", notPEM}},
		{"part of the hop's files", hopFiles(ca, "", ""), false,
			[]string{"--hop-ca", "--hop-cert", "--hop-key", "HDC_HOP_CA", "HDC_HOP_CERT", "HDC_HOP_KEY"}},
		{"unsupported database URL", func(c *Config) { c.DatabaseURL = "mysql://db/hdc" }, false, []string{"--db", "HDC_DATABASE_URL"}},
		{"database URL without a path", func(c *Config) { c.DatabaseURL = "sqlite:" }, false, []string{"--db", "HDC_DATABASE_URL"}},
		{"data directory is a file", func(c *Config) { c.DataDir = notPEM }, false, []string{"--data", "HDC_DATA", notPEM}},
		{"unsupported blob URL", func(c *Config) { c.BlobURL = "ftp://host/blobs" }, false, []string{"--blob", "HDC_BLOB_URL"}},
		{"listen address without a port", func(c *Config) { c.Listen = "127.0.0.1" }, false, []string{"--listen", "HDC_LISTEN"}},
		{"internal address without a port", func(c *Config) { c.InternalListen = "localhost" }, false,
			[]string{"--internal-listen", "HDC_INTERNAL_LISTEN"}},
		{"public beyond loopback without the hop", func(c *Config) { c.Listen = "0.0.0.0:9080" }, false,
			[]string{"--listen", "HDC_LISTEN", "--hop-ca", "HDC_HOP_CA"}},
		{"internal beyond loopback", func(c *Config) { c.InternalListen = "0.0.0.0:9081" }, false,
			[]string{"--internal-listen", "HDC_INTERNAL_LISTEN", "--internal-listen-non-loopback", "HDC_INTERNAL_LISTEN_NON_LOOPBACK"}},
		{"public address in use", func(c *Config) { c.Listen = busy.Addr().String() }, true, []string{"--listen", "HDC_LISTEN"}},
		{"internal address in use", func(c *Config) { c.Listen, c.InternalListen = "127.0.0.1:0", busy.Addr().String() }, true,
			[]string{"--internal-listen", "HDC_INTERNAL_LISTEN"}},
		{"zero access token lifetime", func(c *Config) { c.AccessTokenTTL = 0 }, false, []string{"--access-token-ttl", "HDC_ACCESS_TOKEN_TTL"}},
		{"zero refresh token lifetime", func(c *Config) { c.RefreshTokenTTL = 0 }, false, []string{"--refresh-token-ttl", "HDC_REFRESH_TOKEN_TTL"}},
		{"rotation too fast", func(c *Config) { c.SigningKeyRotation = keyPublishAhead }, false,
			[]string{"--signing-key-rotation", "HDC_SIGNING_KEY_ROTATION"}},
		{"huge upload limit", func(c *Config) { c.UploadLimit = 4 << 30 }, false, []string{"--upload-limit", "HDC_UPLOAD_LIMIT"}},
		{"no issuer", func(c *Config) { c.Issuer = "" }, false, []string{"--issuer", "HDC_ISSUER"}},
		{"no audience", func(c *Config) { c.Audience = "" }, false, []string{"--audience", "HDC_AUDIENCE"}},
		{"no data directory", func(c *Config) { c.DataDir = "" }, false, []string{"--data", "HDC_DATA"}},
		{"bad SQS endpoint", func(c *Config) { c.SQSEndpoint = "127.0.0.1:4100" }, false,
			[]string{"--sqs-endpoint", "AWS_ENDPOINT_URL_SQS"}},
		{"fleet forgotten while current", func(c *Config) { c.FleetForgetAfter = 14 * time.Second }, false,
			[]string{"--fleet-forget-after", "HDC_FLEET_FORGET_AFTER", "15s"}},
		{"a private network for every workspace", func(c *Config) { c.WebhookAllowNets = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")} }, false,
			[]string{"--webhook-allow-nets", "HDC_WEBHOOK_ALLOW_NETS", "10.0.0.0/8", "not loopback"}},
		{"more than loopback", func(c *Config) { c.WebhookAllowNets = []netip.Prefix{netip.MustParsePrefix("126.0.0.0/7")} }, false,
			[]string{"--webhook-allow-nets", "HDC_WEBHOOK_ALLOW_NETS", "126.0.0.0/7"}},
		{"no subscriptions", func(c *Config) { c.WebhookMaxSubscriptions = 0 }, false,
			[]string{"--webhook-max-subscriptions", "HDC_WEBHOOK_MAX_SUBSCRIPTIONS"}},
		{"no workers", func(c *Config) { c.WebhookWorkers = 0 }, false, []string{"--webhook-workers", "HDC_WEBHOOK_WORKERS"}},
		{"workspace concurrency not below the workers", func(c *Config) { c.WebhookWorkers, c.WebhookWorkspaceConcurrency = 8, 8 }, false,
			[]string{"--webhook-workspace-concurrency", "HDC_WEBHOOK_WORKSPACE_CONCURRENCY", "--webhook-workers", "HDC_WEBHOOK_WORKERS"}},
		{"no workspace concurrency", func(c *Config) { c.WebhookWorkspaceConcurrency = 0 }, false,
			[]string{"--webhook-workspace-concurrency", "HDC_WEBHOOK_WORKSPACE_CONCURRENCY"}},
		{"lease not above the timeout", func(c *Config) { c.WebhookLease = c.WebhookTimeout }, false,
			[]string{"--webhook-lease", "HDC_WEBHOOK_LEASE", "--webhook-timeout", "HDC_WEBHOOK_TIMEOUT"}},
		{"no poll interval", func(c *Config) { c.WebhookPollInterval = 0 }, false,
			[]string{"--webhook-poll-interval", "HDC_WEBHOOK_POLL_INTERVAL"}},
		{"no timeout", func(c *Config) { c.WebhookTimeout = -time.Second }, false, []string{"--webhook-timeout", "HDC_WEBHOOK_TIMEOUT"}},
		{"no connect timeout", func(c *Config) { c.WebhookConnectTimeout = 0 }, false,
			[]string{"--webhook-connect-timeout", "HDC_WEBHOOK_CONNECT_TIMEOUT"}},
		{"no backoff base", func(c *Config) { c.WebhookBackoffBase = 0 }, false,
			[]string{"--webhook-backoff-base", "HDC_WEBHOOK_BACKOFF_BASE"}},
		{"backoff max below base", func(c *Config) { c.WebhookBackoffMax = c.WebhookBackoffBase / 2 }, false,
			[]string{"--webhook-backoff-max", "HDC_WEBHOOK_BACKOFF_MAX", "--webhook-backoff-base", "HDC_WEBHOOK_BACKOFF_BASE"}},
		{"no horizon", func(c *Config) { c.WebhookGiveUpAfter = 0 }, false,
			[]string{"--webhook-give-up-after", "HDC_WEBHOOK_GIVE_UP_AFTER"}},
		{"negative retention", func(c *Config) { c.WebhookRetention = -time.Hour }, false,
			[]string{"--webhook-retention", "HDC_WEBHOOK_RETENTION"}},
		{"negative attempt retention", func(c *Config) { c.WebhookAttemptRetention = -time.Hour }, false,
			[]string{"--webhook-attempt-retention", "HDC_WEBHOOK_ATTEMPT_RETENTION"}},
		{"negative disable period", func(c *Config) { c.WebhookDisableAfter = -time.Hour }, false,
			[]string{"--webhook-disable-after", "HDC_WEBHOOK_DISABLE_AFTER"}},
		{"no keeper", func(c *Config) { c.Keeper = "" }, false, []string{"--keeper", "HDC_KEEPER", "is required"}},
		{"a keeper of an unknown scheme", func(c *Config) { c.Keeper = "vault://k" }, false, []string{"--keeper", "HDC_KEEPER", `scheme "vault"`}},
		{"a local key of the wrong size", func(c *Config) { c.Keeper = "base64key://c2hvcnQ=" }, false, []string{"--keeper", "HDC_KEEPER", "32-byte key"}},
		{"a missing key file", func(c *Config) { c.Keeper = "keyfile://" + missing }, false, []string{"--keeper", "HDC_KEEPER", missing}},
		{"no checkpoint destination", func(c *Config) { c.AuditCheckpoints = "" }, false, []string{"--audit-checkpoints", "HDC_AUDIT_CHECKPOINTS"}},
		{"a checkpoint destination of an unknown scheme", func(c *Config) { c.AuditCheckpoints = "ftp://x" }, false, []string{"--audit-checkpoints", "HDC_AUDIT_CHECKPOINTS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.DataDir = t.TempDir()
			cfg.Keeper = testKeeper
			tt.mutate(&cfg)
			err := newAndListen(t, cfg, tt.listen)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			t.Log(msg)
			if strings.Contains(msg, "\n") {
				t.Errorf("error of more than one line: %q", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not name %s", msg, w)
				}
			}
		})
	}
}

// newAndListen builds a server of cfg and, with listen, lets it listen:
// the error of either.
func newAndListen(t *testing.T, cfg Config, listen bool) error {
	srv, err := New(t.Context(), cfg, zap.NewNop())
	if err != nil {
		return err
	}
	defer srv.Close()
	if !listen {
		return nil
	}
	// Should it listen after all, it serves until this ends, then says nil.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	return srv.ListenAndServe(ctx)
}

// TestAnotherKeeperFailsFast: a keeper that cannot unwrap the store's data
// key (another key than the one the data was sealed with) stops the start,
// naming the setting, and changes nothing: the right keeper still opens
// the store afterwards.
func TestAnotherKeeperFailsFast(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.Keeper = testKeeper
	if err := newAndListen(t, cfg, false); err != nil {
		t.Fatal(err)
	}
	other := cfg
	other.Keeper = testkit.KeeperURL()
	err := newAndListen(t, other, false)
	if err == nil || !strings.Contains(err.Error(), "--keeper (HDC_KEEPER)") || !strings.Contains(err.Error(), "cannot unwrap") {
		t.Fatalf("another keeper: %v", err)
	}
	if err := newAndListen(t, cfg, false); err != nil {
		t.Fatalf("the store's own keeper, after another was refused: %v", err)
	}
}
