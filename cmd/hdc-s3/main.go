// Command hdc-s3 is an S3-compatible store for trials and tests of a
// fleet, on one host: docs/deploy.md's "A fleet, step by step" runs its
// blob store and audit checkpoints on it. It is not for production: it
// checks no credential (whoever reaches its address reads and writes every
// bucket), has neither versioning nor object lock, and keeps its buckets
// in one file with no durability guarantee.
//
// It serves gofakes3, the S3 fake the project's tests use, over its bolt
// backend, which keeps the buckets in a file (--db) so that a trial fleet
// that restarts finds its blobs and checkpoints again. It creates the blob
// store's and the checkpoints' buckets when they are missing, listens on
// loopback unless told otherwise (--allow-network), and prints the
// environment a backend needs to use them: the AWS credentials (any pair
// serves) and HDC_BLOB_URL and HDC_AUDIT_CHECKPOINTS naming its endpoint
// with path-style addressing.
//
//	go build -o /usr/local/bin/ ./cmd/hdc-s3
//	hdc-s3 [--listen 127.0.0.1:9000] [--db hdc-s3.db] [--blob-bucket hdc-records] [--checkpoint-bucket hdc-audit] [--allow-network]
//
// It stops on SIGINT or SIGTERM, once the requests in flight are answered.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, pflag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "hdc-s3:", err)
		os.Exit(1)
	}
}

// notForProduction is what --help and the start-up line say of the store.
const notForProduction = `For trials and tests, not for production: it checks no credential
(whoever reaches its address reads and writes every bucket), has neither
versioning nor object lock, and keeps its buckets in one file with no
durability guarantee.`

// run parses args, opens the store and serves it until ctx is done. It
// writes the environment lines to stdout, and its start-up line, its
// usage and what goes wrong while it serves to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	opts, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	s, err := open(opts, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "hdc-s3: serving %s from %s, buckets %s and %s. %s\n",
		s.endpoint, opts.db, opts.blobBucket, opts.checkpointBucket, strings.Join(strings.Fields(notForProduction), " "))
	for _, line := range s.environment() {
		if _, err := fmt.Fprintln(stdout, line); err != nil {
			s.close()
			return err
		}
	}
	return s.serve(ctx)
}

// options are hdc-s3's flags.
type options struct {
	listen           string
	db               string
	blobBucket       string
	checkpointBucket string
	allowNetwork     bool
}

// parseFlags reads args; --help prints the usage to w and returns
// pflag.ErrHelp.
func parseFlags(args []string, w io.Writer) (options, error) {
	var o options
	fs := pflag.NewFlagSet("hdc-s3", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(w)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:9000", "the `address` to serve S3 on: loopback unless --allow-network")
	fs.StringVar(&o.db, "db", "hdc-s3.db", "the `file` the buckets are kept in (bolt), created when missing")
	fs.StringVar(&o.blobBucket, "blob-bucket", "hdc-records", "the blob store's `bucket` (HDC_BLOB_URL), created when missing")
	fs.StringVar(&o.checkpointBucket, "checkpoint-bucket", "hdc-audit", "the audit checkpoints' `bucket` (HDC_AUDIT_CHECKPOINTS), created when missing")
	fs.BoolVar(&o.allowNetwork, "allow-network", false, "listen on an address that is not loopback: whoever reaches it reads and writes every bucket")
	fs.Usage = func() {
		fmt.Fprintf(w, `hdc-s3 serves an S3-compatible store on one host, for a trial of a fleet
(docs/deploy.md, "A fleet, step by step") and for tests: it creates the two
buckets when they are missing and prints the environment a backend needs to
use them.

%s

Usage: hdc-s3 [flags]

%s`, notForProduction, fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q: hdc-s3 takes flags only", fs.Arg(0))
	}
	return o, nil
}
