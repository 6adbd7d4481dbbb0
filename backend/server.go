// Package backend is the Health Data Connect backend service: login and
// refresh with EdDSA access tokens, uploads that become health records,
// records retrieved as FHIR documents, and webhook subscriptions.
//
// It serves two listeners, both over the hop's mutual TLS. The public one
// carries the API routes of the specification and belongs behind the
// edge, which checks bearer tokens and forwards the caller's identity in
// X-HDC-* headers. The internal one carries the JWKS the edge verifies
// tokens with, the endpoint parsers post results to, the endpoint other
// services publish webhook events to, health checks and Prometheus
// metrics; each route but the health checks serves one role of client
// certificate (the edge, a parser, a publisher, a scraper).
//
// While it serves, it delivers the published events to the webhook
// subscriptions from a durable outbox (package webhook/delivery).
//
// A Server runs in its own process (cmd/hdc-backend) or inside another
// (hdc up, tests):
//
//	srv, err := backend.New(ctx, cfg, logger)
//	...
//	defer srv.Close()
//	creds, err := srv.Identity().CreateClient(ctx, "demo")
//	err = srv.Serve(ctx, publicListener, internalListener)
package backend

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/audit/checkpoint"
	"github.com/health-data-connect/hdc/backend/audit/retention"
	"github.com/health-data-connect/hdc/backend/audit/window"
	"github.com/health-data-connect/hdc/backend/fleet"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/keyplane"
	"github.com/health-data-connect/hdc/backend/replay"
	"github.com/health-data-connect/hdc/backend/sealed"
	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/backend/token"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/backend/webhook/delivery"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// Server is the backend service.
type Server struct {
	cfg      Config
	log      *zap.Logger
	store    *sealed.Store
	identity *identity.Service
	issuer   *token.Issuer
	delivery *delivery.Dispatcher
	// refusals stands before the store's audit trail for the refusals
	// the routes record (package audit/window).
	refusals *window.Trail
	// checkpoints writes the audit trails' heads outside the database.
	checkpoints *checkpoint.Job
	// retention prunes the audit trails' expired records.
	retention *retention.Job
	// deny refuses the hop's certificates an operator revoked, on both
	// listeners.
	deny *admin.DenyList
	// guard decides which addresses each workspace's webhooks may reach,
	// from the grants, whose copy grants keeps.
	guard  *webhook.Guard
	grants *webhook.Grants
	// keyHub wakes the edges' requests for key changes.
	keyHub *keyplane.Hub
	// fleet reads the backends' heartbeats and the edges' reports.
	fleet *fleet.Service
	// replays refuses a fresh request received before.
	replays  *replay.Guard
	public   http.Handler
	internal http.Handler
	// hop is the listeners' TLS, nil when they are plain loopback HTTP.
	hop *tls.Config
	// tracing says whether the environment asks for traces
	// (telemetry.Enabled): each request is then a span.
	tracing bool
	// active counts the requests being served, on both listeners.
	active atomic.Int64

	closeOnce sync.Once
	closeErr  error
}

// New opens the store and the blob store, ensures a signing key exists
// and builds the handlers. ctx bounds the start-up: when it is done (a
// SIGTERM while the database does not answer, say) New gives up. Close
// releases what New opened.
func New(ctx context.Context, cfg Config, log *zap.Logger) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	hop, err := cfg.hopTLS()
	if err != nil {
		return nil, err
	}
	plain, err := storage.OpenStore(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("%s: opening the store: %w", storeSetting(cfg.DatabaseURL, "db"), err)
	}
	st, err := storage.Seal(ctx, plain, cfg.Keeper, log.Named("sealed"))
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, store: st, hop: hop, tracing: telemetry.Enabled()}
	if err := s.build(ctx); err != nil {
		st.Close()
		return nil, err
	}
	if hop == nil {
		log.Warn("the public listener is plain HTTP without the hop's mutual TLS: any local process can act as the edge")
	}
	log.Info("backend ready",
		zap.String("data", cfg.DataDir), zap.String("database", storage.DescribeStore(cfg.DatabaseURL, cfg.DataDir)),
		zap.String("blobs", storage.DescribeBlobs(cfg.BlobURL, cfg.DataDir)),
		zap.String("audit_checkpoints", checkpoint.Describe(cfg.AuditCheckpoints)), zap.Bool("hop_tls", hop != nil),
		zap.Duration("access_token_ttl", cfg.AccessTokenTTL), zap.Duration("refresh_token_ttl", cfg.RefreshTokenTTL),
		zap.Int64("upload_limit", cfg.UploadLimit), zap.Int("webhook_workers", cfg.WebhookWorkers),
		zap.Int("webhook_workspace_concurrency", cfg.WebhookWorkspaceConcurrency),
		zap.Duration("webhook_give_up_after", cfg.WebhookGiveUpAfter),
		zap.Stringer("webhook_allow_nets", (*prefixList)(&cfg.WebhookAllowNets)))
	return s, nil
}

// Identity manages workspaces, clients and sharing grants: hdc up creates
// its demo client with Identity().CreateClient.
func (s *Server) Identity() *identity.Service { return s.identity }

// Store is the server's store, its secrets sealed: hdc up adds the demo
// key to the key plane through it, as hdc keys add does.
func (s *Server) Store() *sealed.Store { return s.store }

// Fleet is the fleet as the backends see it: the backends running, the
// edges following the key plane, and how far behind each is.
func (s *Server) Fleet() *fleet.Service { return s.fleet }

// Serve serves the public routes on public and the internal ones on
// internal until ctx is done, then shuts both down gracefully (waiting at
// most Config.ShutdownTimeout for requests in flight). It also rotates the
// signing keys when due, delivers webhook events and prunes the audit
// trails (Config.AuditRetention), and writes its heartbeat into the store
// (package fleet). It returns nil after a shutdown ctx asked
// for, and the error otherwise. Serve closes the listeners.
func (s *Server) Serve(ctx context.Context, public, internal net.Listener) error {
	if err := s.refuseListeners(ctx, public, internal); err != nil {
		public.Close()
		internal.Close()
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	servers := []*http.Server{s.httpServer(s.public), s.httpServer(s.internal)}
	errc := make(chan error, len(servers))
	if s.hop != nil {
		// Both listeners speak the hop's TLS. The public one requires the
		// edge's certificate at the handshake; the internal one a
		// certificate of the route's role, if any (web.RequireRole), so
		// that health checks need none.
		servers[0].TLSConfig = s.hop
		servers[1].TLSConfig = s.hop.Clone()
		servers[1].TLSConfig.ClientAuth = tls.VerifyClientCertIfGiven
		go func() { errc <- servers[0].ServeTLS(public, "", "") }()
		go func() { errc <- servers[1].ServeTLS(internal, "", "") }()
	} else {
		go func() { errc <- servers[0].Serve(public) }()
		go func() { errc <- servers[1].Serve(internal) }()
	}
	var background sync.WaitGroup
	background.Go(func() { s.issuer.Run(ctx) })
	background.Go(func() { s.delivery.Run(ctx) })
	background.Go(func() { s.retention.Run(ctx) })
	background.Go(func() { s.refusals.Run(ctx) })
	background.Go(func() { s.checkpoints.Run(ctx) })
	background.Go(func() { s.keyHub.Run(ctx) })
	background.Go(func() { s.replays.Run(ctx) })
	heartbeat := fleet.NewHeartbeat(s.store, internal.Addr().String(), s.cfg.FleetForgetAfter, s.log.Named("fleet"))
	background.Go(func() { heartbeat.Run(ctx) })
	s.log.Info("serving", zap.Stringer("public", public.Addr()), zap.Stringer("internal", internal.Addr()), zap.String("fleet_id", heartbeat.ID()))

	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	cancel()
	shutdownCtx, done := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer done()
	for _, srv := range servers {
		if serr := s.shutdown(shutdownCtx, srv); serr != nil && err == nil {
			err = serr
		}
	}
	background.Wait()
	s.checkpoints.Final(checkpointTimeout) // after the refusal windows' last records
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	s.log.Info("stopped")
	return err
}

// refuseListeners makes the backend's own listeners destinations no
// webhook reaches, whatever the allow-list or a grant says: on a listener
// bound to every address, its port on each of this host's addresses.
func (s *Server) refuseListeners(ctx context.Context, listeners ...net.Listener) error {
	for _, l := range listeners {
		ds, err := webhook.ListenerDestinations(ctx, net.DefaultResolver, l.Addr().String())
		if err != nil {
			return fmt.Errorf("the listener %s, which webhooks must not reach: %w", l.Addr(), err)
		}
		s.guard.Refuse(ds...)
	}
	return nil
}

// shutdownGrace is how long shutdown lets HTTP/2 connections end by
// themselves (net/http gives a GOAWAY a second) before it closes those of
// no request in flight.
const shutdownGrace = time.Second

// shutdown stops srv as Shutdown does, waiting for the requests in flight
// until ctx is done, but closes the connections left once no request is in
// flight and shutdownGrace has passed: net/http counts an HTTP/2
// connection as active for as long as it is open, and a client that kept
// one open in its pool (hdc up's own edge, stopped before the backend)
// held Shutdown to its deadline, and hdc up's Ctrl-C to an error.
func (s *Server) shutdown(ctx context.Context, srv *http.Server) error {
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	grace := time.After(shutdownGrace)
	tick := time.NewTicker(shutdownGrace / 10)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-grace:
			grace = nil
		case <-tick.C:
			if grace == nil && s.active.Load() == 0 {
				srv.Close() // what is left is idle; Shutdown then returns
			}
		}
	}
}

// ListenAndServe listens on Config.Listen and Config.InternalListen and
// calls Serve. An address may be "fd/N", a socket the process inherited
// (systemd socket activation, a test harness), whose actual address must
// then pass the same exposure rules as a configured one.
func (s *Server) ListenAndServe(ctx context.Context) error {
	public, err := listen(s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("%s: %w", named("listen"), err)
	}
	internal, err := listen(s.cfg.InternalListen)
	if err != nil {
		err = fmt.Errorf("%s: %w", named("internal-listen"), err)
	} else {
		err = s.cfg.checkExposure(public.Addr().String(), internal.Addr().String())
	}
	if err != nil {
		public.Close()
		if internal != nil {
			internal.Close()
		}
		return err
	}
	return s.Serve(ctx, public, internal)
}

// listen opens the listen address addr: host:port, or fd/N.
func listen(addr string) (net.Listener, error) {
	n, ok := strings.CutPrefix(addr, "fd/")
	if !ok {
		return net.Listen("tcp", addr)
	}
	fd, err := strconv.ParseUint(n, 10, 31)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: not a file descriptor number", addr)
	}
	f := os.NewFile(uintptr(fd), addr)
	defer f.Close() // the listener holds its own copy
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", addr, err)
	}
	return ln, nil
}

// inherited reports whether addr names an inherited socket (fd/N).
func inherited(addr string) bool { return strings.HasPrefix(addr, "fd/") }

func (s *Server) httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          zap.NewStdLog(s.log.Named("http")),
	}
}

// Close closes the store. Call it after Serve returns.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = errors.Join(s.checkpoints.To.Close(), s.store.Close()) })
	return s.closeErr
}
