package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
)

// DefaultListen is where hdc console listens unless told.
const DefaultListen = "127.0.0.1:8090"

// Config is how Run serves the console.
type Config struct {
	// Listen is the address, loopback unless AllowRemote.
	Listen      string
	AllowRemote bool
	API         adminapi.API
	Log         *zap.Logger
	// Out is where the login URL is printed, for the operator alone.
	Out io.Writer
	// Handover completes the credentials files the console hands over.
	Handover Handover
}

// CheckListen refuses an address beyond loopback (an IP that is not
// loopback, a host name other than localhost, or no host: every
// interface), unless allowRemote.
func CheckListen(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q is not host:port: %w", addr, err)
	}
	if allowRemote || host == "localhost" {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--listen %q is beyond loopback: the console acts with your certificate, so it listens on 127.0.0.1 or ::1 unless you pass --allow-remote", addr)
}

// Run serves the console on cfg.Listen until ctx ends, after printing the
// login URL with its one-time token to cfg.Out. It asks the API who the
// certificate is first, and does not start when no backend answers.
func Run(ctx context.Context, cfg Config) error {
	if err := CheckListen(cfg.Listen, cfg.AllowRemote); err != nil {
		return err
	}
	me, err := cfg.API.Whoami(ctx)
	if err != nil {
		return fmt.Errorf("the console could not reach the Admin API: %w", err)
	}
	l, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	token := Token()
	console := newServer(cfg.API, token, cfg.Log, hostsOf(cfg.Listen).boundTo(l.Addr()), cfg.Handover)
	console.me = &me
	srv := &http.Server{Handler: console, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: zap.NewStdLog(logOrNop(cfg.Log))}
	fmt.Fprintf(cfg.Out, "The console is at http://%s/\nOpen, once, to sign in this browser:\n\n  %s\n\nPress Ctrl-C to stop.\n",
		l.Addr(), LoginURL(l.Addr().String(), token))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(stop); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// LoginURL is the URL that admits a browser with token, on the console at
// addr.
func LoginURL(addr, token string) string { return "http://" + addr + "/login?token=" + token }

func logOrNop(l *zap.Logger) *zap.Logger {
	if l == nil {
		return zap.NewNop()
	}
	return l
}
