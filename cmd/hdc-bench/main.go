// Command hdc-bench measures what the edge costs: (a) plain Caddy
// reverse_proxy against (b) hdc-edge with bearer check, JWE decryption and
// response encryption, in front of the same trivial JSON upstream, the runs
// interleaved so that machine drift cancels, with an A128CBC-HS256 key
// from a registry file and with an A256GCM key from a key plane, the
// edge's added CPU per request beside the codec's time for the same JWE
// work, and with --breakdown the edge's CPU stage by stage (its route
// alone, with hdc_auth, whole); (c) the codec's opening and sealing against go-jose's, for both
// content encryptions; (d) an encrypted upload of 100 MiB through the
// edge, with the edge's peak memory. With --instructions, it counts instead
// the instructions per request of plain Caddy and of the edge, each run
// under valgrind's callgrind, and where the edge's extra ones go.
// Everything runs on loopback and stops by itself; it prints a table and,
// with --json, a machine-readable summary.
//
//	go run ./cmd/hdc-bench [--duration 3s] [--rounds 3] [--concurrency 16] [--payloads 1KiB,64KiB,1MiB] [--breakdown] [--json bench.json] [--profile DIR]
//	go run ./cmd/hdc-bench --instructions DIR [--payloads 1KiB,64KiB] [--json instructions.json]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/health-data-connect/hdc/caddymodule"
	"github.com/health-data-connect/hdc/caddymodule/hdctracing"
)

// edgeArg, as the first argument, makes this binary the Caddy process the
// bench starts: plain Caddy and hdc-edge are then the very same build, and
// only their configurations differ.
const edgeArg = "__edge"

func main() {
	if len(os.Args) > 1 && os.Args[1] == edgeArg {
		os.Args = append(os.Args[:1], os.Args[2:]...)
		if err := hdctracing.StartTracing("hdc-bench-edge"); err != nil {
			fmt.Fprintln(os.Stderr, "hdc-bench:", err)
			os.Exit(1)
		}
		caddycmd.Main()
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "hdc-bench:", err)
		os.Exit(1)
	}
}

// options are the bench's flags.
type options struct {
	duration    time.Duration
	rounds      int
	concurrency int
	uploadMiB   int
	jsonPath    string
	skip        string
	payloads    string
	breakdown   bool
	profileDir  string
	tracing     bool
	instrDir    string
}

func run() error {
	var o options
	flag.DurationVar(&o.duration, "duration", 3*time.Second, "length of each load run")
	flag.IntVar(&o.rounds, "rounds", 3, "interleaved rounds of plain Caddy and the two hdc-edges (A128CBC-HS256, A256GCM) per payload size")
	flag.IntVar(&o.concurrency, "concurrency", 16, "requests in flight during a load run")
	flag.IntVar(&o.uploadMiB, "upload-mib", 100, "file size of the encrypted upload, in MiB")
	flag.StringVar(&o.jsonPath, "json", "", "also write the summary as JSON to this file")
	flag.StringVar(&o.skip, "skip", "", "parts to skip: any of proxy, codec, upload, as a comma-separated list")
	flag.StringVar(&o.payloads, "payloads", "1KiB,64KiB,1MiB", "payload sizes of the proxy part, as a comma-separated list")
	flag.BoolVar(&o.breakdown, "breakdown", false, "also run the edge's route without hdc handlers and with hdc_auth alone, and print where the edge's CPU goes")
	flag.StringVar(&o.profileDir, "profile", "", "save CPU and allocation profiles of every edge under load at each payload size in this directory")
	flag.BoolVar(&o.tracing, "tracing", false, "trace every request of the hdc-edges (sampled, exported over OTLP to a sink in this process), to measure what tracing on costs")
	flag.StringVar(&o.instrDir, "instructions", "", "only count instructions per request under valgrind's callgrind (1 KiB and 64 KiB), "+
		"keeping callgrind's files in this directory")
	flag.Parse()
	if o.tracing {
		stop := traceEdges()
		defer stop()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	if o.instrDir != "" {
		ctx, cancel = context.WithTimeout(context.Background(), time.Hour)
	}
	defer cancel()
	env, err := newBenchEnv()
	if err != nil {
		return err
	}
	defer env.close()

	s := summary{Date: time.Now().UTC().Format(time.RFC3339), CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if o.instrDir != "" {
		if s.Instructions, err = benchInstructions(ctx, env, o); err != nil {
			return fmt.Errorf("instructions: %w", err)
		}
		o.skip = "proxy,codec,upload"
	}
	if !listed(o.skip, "proxy") {
		if s.Proxy, s.Breakdown, err = benchProxy(ctx, env, o); err != nil {
			return fmt.Errorf("proxy: %w", err)
		}
	}
	if !listed(o.skip, "codec") {
		if s.Codec, err = benchCodec(); err != nil {
			return fmt.Errorf("codec: %w", err)
		}
	}
	if !listed(o.skip, "upload") {
		if s.Upload, err = benchUpload(ctx, env, o.uploadMiB); err != nil {
			return fmt.Errorf("upload: %w", err)
		}
	}
	s.Targets = s.checkTargets()
	s.print(os.Stdout)
	if o.jsonPath != "" {
		b, _ := json.MarshalIndent(s, "", "  ")
		if err := os.WriteFile(o.jsonPath, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}
