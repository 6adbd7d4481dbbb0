// Command hdc-backend runs the Health Data Connect backend: the public API
// routes behind the edge, and the internal routes (JWKS, parser results,
// health, metrics). Settings come from HDC_* environment variables and
// flags; flags win. It stops gracefully on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/health-data-connect/hdc/backend"
	"github.com/health-data-connect/hdc/internal/version"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "hdc-backend:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	cfg := backend.DefaultConfig()
	if err := cfg.LoadEnv(os.LookupEnv); err != nil {
		return err
	}
	fs := flag.NewFlagSet("hdc-backend", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	level := zap.NewAtomicLevelAt(zapcore.InfoLevel)
	if v, ok := os.LookupEnv("HDC_LOG_LEVEL"); ok {
		if err := level.UnmarshalText([]byte(v)); err != nil {
			return fmt.Errorf("HDC_LOG_LEVEL: %w", err)
		}
	}
	fs.TextVar(&level, "log-level", level, "log level: debug, info, warn or error (env HDC_LOG_LEVEL)")
	showVersion := fs.Bool("version", false, "print the version and VCS revision, and exit")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return nil
		}
		return err
	}
	if *showVersion {
		fmt.Println("hdc-backend", version.Get())
		return nil
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	logCfg := zap.NewProductionConfig()
	logCfg.Level = level
	log, err := logCfg.Build()
	if err != nil {
		return err
	}
	defer log.Sync()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := backend.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer srv.Close()
	return srv.ListenAndServe(ctx)
}
