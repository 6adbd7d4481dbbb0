// Command hdc-backend runs the Health Data Connect backend: the public API
// routes behind the edge, and the internal routes (JWKS, parser results,
// health, metrics). Its settings are the table of backend.Settings: each
// has a flag and an environment variable, read when the flag is not given.
// It stops gracefully on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/health-data-connect/hdc/backend"
	"github.com/health-data-connect/hdc/internal/telemetry"
	"github.com/health-data-connect/hdc/internal/version"
)

func main() {
	cmd := newCommand(os.LookupEnv, serve)
	cmd.SetArgs(os.Args[1:])
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "hdc-backend:", oneLine(err))
		os.Exit(1)
	}
}

// serveFunc runs the backend of cfg, logging at level, until ctx is done.
type serveFunc func(ctx context.Context, cfg backend.Config, level zap.AtomicLevel) error

// newCommand is hdc-backend: flags from its arguments, then the
// environment lookup finds for the flags not given, then serve.
func newCommand(lookup func(string) (string, bool), serve serveFunc) *cobra.Command {
	cfg := backend.DefaultConfig()
	level := zap.NewAtomicLevelAt(zapcore.InfoLevel)
	settings := cfg.Settings(&level)
	var showVersion bool
	cmd := &cobra.Command{
		Use:   "hdc-backend",
		Short: "Run the Health Data Connect backend",
		Long: `hdc-backend runs the Health Data Connect backend: the API routes on its public
listener, behind the edge, and the JWKS, events ingress, parser results, health
and metrics on its internal listener.

Each flag has an environment variable, read when the flag is not given; an
empty variable counts as unset.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unexpected argument %q: hdc-backend takes flags only", args[0])
			}
			return nil
		},
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showVersion {
				_, err := fmt.Fprintln(cmd.OutOrStdout(), "hdc-backend", version.Get())
				return err
			}
			if err := settings.LoadEnv(cmd.Flags(), lookup); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serve(ctx, cfg, level)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false // the table's order, docs/configuration.md's
	settings.Define(fs)
	fs.BoolVar(&showVersion, "version", false, "print the version and VCS revision, and exit")
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError(fs, err) })
	return cmd
}

// flagError rewrites an error of parsing fs to name the flag to fix as the
// settings' other errors do.
func flagError(fs *pflag.FlagSet, err error) error {
	var invalid *pflag.InvalidValueError
	var unknown *pflag.NotExistError
	switch {
	case errors.As(err, &invalid):
		return fmt.Errorf("--%s: %w", invalid.GetFlag().Name, invalid.Unwrap())
	case errors.As(err, &unknown) && unknown.GetSpecifiedShortnames() != "":
		// -listen, as the standard flag package spells it.
		name, _, _ := strings.Cut(unknown.GetSpecifiedShortnames(), "=")
		if fs.Lookup(name) != nil {
			return fmt.Errorf("-%s: a long flag takes two dashes: --%s", name, name)
		}
	}
	return err
}

// oneLine keeps an error on the one line of its report.
func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

// serve runs the backend until ctx is done, logging JSON to stderr.
func serve(ctx context.Context, cfg backend.Config, level zap.AtomicLevel) error {
	logCfg := zap.NewProductionConfig()
	logCfg.Level = level
	log, err := logCfg.Build()
	if err != nil {
		return err
	}
	defer log.Sync()
	stopTracing, err := telemetry.Start(ctx, "hdc-backend")
	if err != nil {
		return fmt.Errorf("tracing (OTEL_*): %w", err)
	}
	defer func() {
		if err := stopTracing(); err != nil {
			log.Warn("exporting the last spans failed", zap.Error(err))
		}
	}()
	srv, err := backend.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer srv.Close()
	return srv.ListenAndServe(ctx)
}
