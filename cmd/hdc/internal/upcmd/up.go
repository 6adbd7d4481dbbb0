package upcmd

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/health-data-connect/hdc/backend"
	auditcheckpoint "github.com/health-data-connect/hdc/backend/audit/checkpoint"
	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/backend/webhook"
	_ "github.com/health-data-connect/hdc/caddymodule"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/clientcmd"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/opscmd"
	"github.com/health-data-connect/hdc/internal/apiclient"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// uploadMaxBodyEnv is the reference Caddyfile's variable for the edge's
// cap on an upload's body.
const uploadMaxBodyEnv = "HDC_UPLOAD_MAX_BODY"

// upHopValidity is how long the hop's certificates of one hdc up run are
// valid: they are made anew at each start.
const upHopValidity = 30 * 24 * time.Hour

// upOptions are the flags of hdc up.
type upOptions struct {
	listen, data, admin, metrics   string
	backendListen, internalListen  string
	caddyfile, logLevel, workspace string
	allowLoopbackWebhooks          bool
	// uploadMaxBody is the edge's cap on an upload's body (envelope or
	// form); "" is twice the backend's upload limit.
	uploadMaxBody string
	// backend is the backend's configuration: its defaults, then the
	// HDC_* environment, then the flags hdc up shares with hdc-backend.
	backend backend.Config
}

func newUpCmd() *cobra.Command {
	o := upOptions{backend: backend.DefaultConfig()}
	shared := o.backend.Settings(nil).Only("upload-limit")
	cmd := &cobra.Command{
		Use:   "up [--listen 127.0.0.1:8080] [--data ./data] [--allow-loopback-webhooks]",
		Short: "Run the whole stack locally: the backend and the edge, in one process",
		Long: `Run the backend and the edge (Caddy with the hdc modules, loading the reference
Caddyfile) in one process, on SQLite and a blob directory under --data.

On the first run it creates a demo workspace, client and encryption key and
writes them to <data>/demo-credentials.json (mode 0600), which hdc call reads;
later runs reuse the data. The clients' keys are in the database, and the
edge looks them up in the backend (hdc keys manages them); a keys.json an
earlier version kept in <data> is moved into the database on the next run. Unless HDC_KEEPER names a keeper, the secrets the
stack stores are sealed under a local key it makes on the first run,
<data>/keeper.key (mode 0600), which the hdc commands find there; the audit
trails' checkpoints go to <data>/audit-checkpoints. Ctrl-C stops everything
cleanly.

The backend reads the HDC_* variables hdc-backend reads (its listeners, data
and database excepted, which hdc up sets), and the edge the reference
Caddyfile's; flags win.`,
		Example: `  hdc up
  hdc up --allow-loopback-webhooks          # for hdc webhooks listen on this machine
  hdc up --upload-limit 200MiB              # files up to 200 MiB (the edge takes twice that of body)
  hdc up --listen 127.0.0.1:9443 --metrics 127.0.0.1:9444 --admin off --data /tmp/hdc`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.backend.Settings(nil).LoadEnv(cmd.Flags(), os.LookupEnv); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runUp(ctx, o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "127.0.0.1:8080", "address of the API (the edge)")
	f.StringVar(&o.data, "data", "./data", "data directory: database, blobs, keeper key, demo credentials")
	f.StringVar(&o.admin, "admin", "", "the edge's admin API: a unix socket `path` only your user may open (default <data>/"+adminSocket+`), or "off"; never a TCP port, which every local user could reach`)
	f.StringVar(&o.metrics, "metrics", "127.0.0.1:9180", "address of the edge's metrics (/metrics only)")
	f.StringVar(&o.backendListen, "backend-listen", "127.0.0.1:9080", "address of the backend's public listener (reached only through the edge)")
	f.StringVar(&o.internalListen, "internal-listen", "127.0.0.1:9081", "address of the backend's internal listener (JWKS, events, metrics)")
	f.StringVar(&o.caddyfile, "caddyfile", "", "edge configuration (default: the embedded reference Caddyfile); it may use Caddy's standard modules except templates, file_server and php_fastcgi")
	f.StringVar(&o.logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	f.StringVar(&o.workspace, "workspace", "demo", "workspace of the demo client created on the first run")
	f.BoolVar(&o.allowLoopbackWebhooks, "allow-loopback-webhooks", false, "let webhooks be delivered to 127.0.0.0/8 and ::1 (for local receivers)")
	shared.Define(f)
	cli.EnvStringVar(f, &o.uploadMaxBody, "upload-max-body", uploadMaxBodyEnv, "", "largest upload body the edge reads, envelope or form, such as 64MiB; default twice --upload-limit")
	return cmd
}

func runUp(ctx context.Context, o upOptions, out io.Writer) error {
	if err := o.checkEdgeAddrs(); err != nil {
		return err
	}
	data, err := filepath.Abs(o.data)
	if err != nil {
		return err
	}
	if o.admin, err = adminAddress(o.admin, data); err != nil {
		return err
	}
	if err := os.MkdirAll(data, 0o700); err != nil {
		return err
	}
	logger, err := upLogger(o.logLevel)
	if err != nil {
		return err
	}
	defer logger.Sync()
	stopTracing, err := telemetry.Start(ctx, "hdc-up") // one process: the edge's spans and the backend's
	if err != nil {
		return fmt.Errorf("tracing (OTEL_*): %w", err)
	}
	defer func() { _ = stopTracing() }()
	hopDir, err := o.prepareData(data)
	if err != nil {
		return err
	}
	public, internal, err := listenPair(o.backendListen, o.internalListen)
	if err != nil {
		return err
	}
	srv, creds, err := o.newBackend(ctx, data, hopDir, logger, out)
	if err != nil {
		public.Close()
		internal.Close()
		return err
	}
	defer srv.Close()

	backendDone := make(chan error, 1)
	serveCtx, stopBackend := context.WithCancel(context.Background())
	defer stopBackend()
	go func() { backendDone <- srv.Serve(serveCtx, public, internal) }()

	person, removeAdmin, err := publishAdmin(data, hopDir, o.internalListen)
	if err == nil {
		defer removeAdmin()
		err = startEdge(o, data, hopDir)
	}
	if err != nil {
		stopBackend()
		<-backendDone
		return err
	}
	printGuide(out, o, data, creds, person)

	return wait(ctx, out, backendDone, stopBackend)
}

// prepareData makes what the stack needs in data before it starts, and
// returns the directory of the hop's certificates. The backend trusts
// identity headers only from the edge, which proves itself with a client
// certificate of the hop's authority: a new one on every run, under
// data/tls, with a publisher's for hdc events publish. With no keeper
// configured (no KMS), the keeper is a local key, made on the first run.
func (o *upOptions) prepareData(data string) (string, error) {
	hopDir := filepath.Join(data, "tls")
	if err := pki.InitDir(hopDir, upHopValidity, true); err != nil {
		return "", fmt.Errorf("making the hop's certificates: %w", err)
	}
	if _, err := pki.IssueFromDir(hopDir, pki.Leaf{Role: pki.Publisher}, upHopValidity, true); err != nil {
		return "", fmt.Errorf("making the publisher's certificate: %w", err)
	}
	if o.backend.Keeper == "" {
		url, err := keeper.CreateKeyFile(filepath.Join(data, storage.LocalKeyFile))
		if err != nil {
			return "", fmt.Errorf("making the local keeper's key: %w", err)
		}
		o.backend.Keeper = url
	}
	return hopDir, nil
}

// newBackend makes the stack's backend on data, moves into its database the
// registry file an earlier version kept there, and makes sure of the demo
// client, whose credentials it returns. On failure it closes the backend.
func (o upOptions) newBackend(ctx context.Context, data, hopDir string, logger *zap.Logger, out io.Writer) (*backend.Server, apiclient.Credentials, error) {
	var creds apiclient.Credentials
	cfg, err := o.backendConfig(ctx, data, hopDir)
	if err != nil {
		return nil, creds, err
	}
	srv, err := backend.New(ctx, cfg, logger.Named("backend"))
	if err != nil {
		return nil, creds, err
	}
	n, err := importRegistry(ctx, srv, data, o.backend.Keeper)
	if err == nil && n > 0 {
		fmt.Fprintf(out, "Moved the %d keys of %s into the database.\n", n, filepath.Join(data, legacyRegistryFile))
	}
	if err == nil {
		creds, err = ensureDemo(ctx, srv, data, "http://"+o.listen, o.workspace)
	}
	if err != nil {
		srv.Close()
		return nil, creds, err
	}
	return srv, creds, nil
}

// wait serves until ctx is done or the backend stops, then stops the edge
// and the backend.
func wait(ctx context.Context, out io.Writer, backendDone <-chan error, stopBackend func()) error {
	select {
	case <-ctx.Done():
	case err := <-backendDone:
		_ = caddy.Stop()
		return fmt.Errorf("backend stopped: %w", err)
	}
	fmt.Fprintln(out, "\nStopping…")
	stopErr := caddy.Stop()
	stopBackend()
	if err := <-backendDone; err != nil {
		return err
	}
	return stopErr
}

// backendConfig is the backend's configuration in this stack: the flags'
// and environment's, on the addresses, data and hop files of hdc up, the
// edge's site and metrics listeners refused to webhooks (the backend
// refuses its own).
func (o upOptions) backendConfig(ctx context.Context, data, hopDir string) (backend.Config, error) {
	cfg := o.backend
	cfg.Listen, cfg.InternalListen, cfg.DataDir = o.backendListen, o.internalListen, data
	cfg.HopCA = filepath.Join(hopDir, pki.CAFile)
	cfg.HopCert, cfg.HopKey = filepath.Join(hopDir, pki.CertFile(pki.Backend)), filepath.Join(hopDir, pki.KeyFile(pki.Backend))
	cfg.DatabaseURL = "" // the embedded default: SQLite under data
	if cfg.AuditCheckpoints == auditcheckpoint.Log {
		// A directory beside the database: all this stack has. In
		// production, a bucket the database's writers cannot write.
		cfg.AuditCheckpoints = "file://" + filepath.ToSlash(filepath.Join(data, storage.CheckpointDir)) + "?create_dir=true"
	}
	if o.allowLoopbackWebhooks {
		cfg.WebhookAllowNets = append(cfg.WebhookAllowNets, netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"))
	}
	for _, edge := range []string{o.listen, o.metrics} {
		ds, err := webhook.ListenerDestinations(ctx, net.DefaultResolver, edge)
		if err != nil {
			return cfg, fmt.Errorf("the edge's listener %s, which webhooks must not reach: %w", edge, err)
		}
		cfg.WebhookRefusedDestinations = append(cfg.WebhookRefusedDestinations, ds...)
	}
	return cfg, nil
}

func upLogger(level string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	// JSON, as the edge's logs in this process are: one format on stderr.
	c := zap.NewProductionConfig()
	c.Level = zap.NewAtomicLevelAt(lvl)
	c.DisableStacktrace = true
	return c.Build()
}

// printGuide tells a newcomer what is running and what to try, with
// commands that work when pasted.
func printGuide(w io.Writer, o upOptions, data string, creds apiclient.Credentials, person string) {
	hdcCmd := "hdc"
	if exe := os.Args[0]; strings.Contains(exe, "go-build") {
		hdcCmd = "go run ./cmd/hdc"
	} else if strings.ContainsRune(exe, '/') {
		hdcCmd = exe
	}
	credsPath := filepath.Join(data, opscmd.DemoCredentialsFile)
	if rel, err := filepath.Rel(mustGetwd(), credsPath); err == nil && !strings.HasPrefix(rel, "..") {
		credsPath = rel
	}
	call := hdcCmd + " call"
	if credsPath != clientcmd.DefaultCredentials {
		call += " --credentials " + credsPath
	}
	publish := hdcCmd + " events publish"
	if dir := filepath.Dir(credsPath); dir != filepath.Dir(clientcmd.DefaultCredentials) {
		publish += " --data-dir " + dir // where its publisher's certificate is
	}
	fmt.Fprintf(w, `Health Data Connect is up.

  API (the edge)      %s
  backend internal    https://%s  (JWKS, events, parser results, metrics: each needs its role's certificate)
  edge admin          %s
  edge metrics        http://%s/metrics
  demo client         %s in workspace %s, encryption key %s
  credentials         %s
  Admin API           https://%s/admin/v1  (the operator commands, as you, %s: %s)

Try, in another terminal:

  %s POST /notification/v1/connect/webhook/subscriptions --data '{"endpoint":"https://example.org/hooks"}'
  %s GET /notification/v1/connect/webhook/subscriptions
  %s --encrypt POST /mr/api/v2/docs --file README.md
  %s --encrypt GET /health/api/v1/fhir/retrieve --query identifier=<care_context_id from the upload>
  %s --backend-internal https://%s --workspace %s --type appointment.created --data '{"appointment_id":"a-1"}'
  %s clients list

The operator console, in your browser (it prints the URL to open): %s console

Press Ctrl-C to stop.
`, creds.BaseURL, o.internalListen, adminGuide(o.admin), o.metrics, creds.ClientID, creds.WorkspaceID, creds.Kid, credsPath,
		dialable(o.internalListen), person, filepath.Join(data, opscmd.AdminFile),
		call, call, call, call, publish, o.internalListen, creds.WorkspaceID, hdcCmd+dataFlag(data), hdcCmd+dataFlag(data))
}

func mustGetwd() string {
	wd, err := os.Getwd()
	if err != nil {
		return "/"
	}
	return wd
}
