package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/health-data-connect/hdc/internal/jwe"
)

// summary is the bench's result, printed as tables and written as JSON.
type summary struct {
	Date         string         `json:"date"`
	CPUs         int            `json:"cpus"`
	GoVersion    string         `json:"go_version"`
	Proxy        []proxyRow     `json:"proxy,omitempty"`
	Breakdown    []breakdownRow `json:"breakdown,omitempty"`
	Codec        []codecRow     `json:"codec,omitempty"`
	Upload       *uploadResult  `json:"upload,omitempty"`
	Instructions []instrRow     `json:"instructions,omitempty"`
	Targets      []target       `json:"targets"`
}

// target is one of the goals of the performance issue, with the figure
// measured against it.
type target struct {
	Name     string  `json:"name"`
	Goal     string  `json:"goal"`
	Measured float64 `json:"measured"`
	Met      bool    `json:"met"`
}

// The goals of the edge against plain Caddy, from the small request's
// issue: at 1 KiB, its CPU per request and its requests/s against plain
// Caddy's; at 64 KiB and 1 MiB, its added CPU per request against the
// codec's time for the same JWE work.
const (
	smallCPUGoal   = 1.2
	smallShareGoal = 0.85
	addedCPUGoal   = 1.2
)

func (s *summary) checkTargets() []target {
	ts := instrTargets(s.Instructions)
	for _, r := range s.Proxy {
		switch r.Payload {
		case rowName("1KiB", r.Enc):
			cpu := r.EdgeCPUUs / r.PlainCPUUs
			ts = append(ts,
				target{"edge req/s at 1 KiB " + r.Enc + ", share of plain Caddy", fmt.Sprintf(">= %.2f", smallShareGoal), r.Ratio, r.Ratio >= smallShareGoal},
				target{"edge CPU/req at 1 KiB " + r.Enc + ", times plain Caddy's", fmt.Sprintf("<= %.1f", smallCPUGoal), cpu, cpu <= smallCPUGoal})
			if r.Enc == jwe.EncA128CBCHS256 {
				ts = append(ts, target{"edge added p50 at 1 KiB (ms)", "< 0.5", r.AddedP50Ms, r.AddedP50Ms < 0.5})
			}
		case rowName("64KiB", r.Enc), rowName("1MiB", r.Enc):
			size := strings.Fields(r.Payload)[0] // "64KiB" → "64 KiB"
			size = size[:len(size)-3] + " " + size[len(size)-3:]
			ts = append(ts, target{"edge added CPU/req at " + size + " " + r.Enc + ", times the codec's open + seal",
				fmt.Sprintf("<= %.1f", addedCPUGoal), r.AddedOverCodec, r.AddedOverCodec <= addedCPUGoal})
		}
	}
	for _, r := range s.Codec {
		switch r.Payload {
		case "16MiB":
			ts = append(ts, target{"codec throughput at 16 MiB, times go-jose", ">= 8", r.Ratio, r.Ratio >= 8})
		case "1KiB":
			ts = append(ts, target{"codec throughput at 1 KiB, times go-jose", ">= 1", r.Ratio, r.Ratio >= 1})
		}
	}
	if u := s.Upload; u != nil {
		ts = append(ts,
			target{fmt.Sprintf("%d MiB upload: edge peak RSS above idle (MiB)", u.FileMiB), "<= 64", u.AboveIdleMiB, u.AboveIdleMiB <= 64},
			target{fmt.Sprintf("%d MiB upload: file MB/s", u.FileMiB), ">= 150", u.FileMBps, u.FileMBps >= 150 && u.UpstreamIntact})
	}
	return ts
}

func (s *summary) print(w io.Writer) {
	fmt.Fprintf(w, "hdc-bench %s, %d CPUs, %s\n", s.Date, s.CPUs, s.GoVersion)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	if len(s.Proxy) > 0 {
		s.printProxy(w, tw)
	}
	if len(s.Breakdown) > 0 {
		s.printBreakdown(w, tw)
	}
	if len(s.Codec) > 0 {
		s.printCodec(w, tw)
	}
	if len(s.Instructions) > 0 {
		s.printInstructions(w, tw)
	}
	if u := s.Upload; u != nil {
		fmt.Fprintf(w, "\n(d) encrypted upload through hdc-edge: %d MiB of file, %d bytes of envelope\n", u.FileMiB, u.EnvelopeBytes)
		fmt.Fprintf(w, "    %.2f s, %.0f MB/s of file; edge RSS idle %.1f MiB, peak %.1f MiB (%.1f above idle); upstream got it intact: %v\n",
			u.Seconds, u.FileMBps, u.IdleRSSMiB, u.PeakRSSMiB, u.AboveIdleMiB, u.UpstreamIntact)
	}
	fmt.Fprintln(w, "\ntargets")
	for _, t := range s.Targets {
		mark := "met"
		if !t.Met {
			mark = "MISSED"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%s\t\n", t.Name, t.Goal, t.Measured, mark)
	}
	tw.Flush()
}

// printProxy prints the table of (a) against (b), then how its rows were
// measured, once for each content encryption.
func (s *summary) printProxy(w io.Writer, tw *tabwriter.Writer) {
	fmt.Fprintf(w, "\n(a) plain Caddy vs (b) hdc-edge (bearer + JWE decrypt + encrypt), %d rounds x %.0fs, %d in flight\n",
		s.Proxy[0].Rounds, s.Proxy[0].RoundSeconds, s.Proxy[0].Concurrency)
	fmt.Fprintln(tw, "payload\ta req/s\tb req/s\tb/a\ta p50 ms\tb p50 ms\tadded p50 ms\ta p99 ms\tb p99 ms\t"+
		"a CPU µs/req\tb CPU µs/req\tb/a CPU\tper round\tadded CPU µs/req\tcodec µs/req\tadded/codec\t")
	var encs []string
	for _, r := range s.Proxy {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.0f\t%.0f\t%.2f\t%.2f–%.2f\t%.0f\t%.0f\t%.2f\t\n",
			r.Payload, r.PlainRPS, r.EdgeRPS, r.Ratio, r.PlainP50Ms, r.EdgeP50Ms, r.AddedP50Ms, r.PlainP99Ms, r.EdgeP99Ms,
			r.PlainCPUUs, r.EdgeCPUUs, r.EdgeCPUUs/r.PlainCPUUs, r.CPURatioLo, r.CPURatioHi, r.AddedCPUUs, r.CodecUs, r.AddedOverCodec)
		if !slices.Contains(encs, r.Enc) {
			encs = append(encs, r.Enc)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "goals: at 1 KiB, b CPU/a CPU <= %.1f and b/a >= %.2f; at 64 KiB and 1 MiB, added/codec <= %.1f. %s\n",
		smallCPUGoal, smallShareGoal, addedCPUGoal, codecNote)
	for _, enc := range encs {
		fmt.Fprintf(w, "%s: %s\n", enc, proxyNotes(enc))
	}
}

// printBreakdown prints the edge's CPU per request stage by stage, each
// over plain Caddy's.
func (s *summary) printBreakdown(w io.Writer, tw *tabwriter.Writer) {
	fmt.Fprintln(w, "\n(a') where the edge's CPU goes: CPU µs/request of plain Caddy, of the edge's route alone (handle + reverse_proxy), "+
		"with hdc_auth, and of the whole edge (A128CBC-HS256); the stages forward the encrypted request as it is")
	fmt.Fprintln(tw, "payload\tplain\thandle\t+hdc_auth\twhole edge\thandle/plain\t+hdc_auth/plain\twhole/plain\t")
	for _, r := range s.Breakdown {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t\n", r.Payload, r.PlainCPUUs, r.HandleCPU, r.AuthCPU, r.EdgeCPU,
			r.HandleCPU/r.PlainCPUUs, r.AuthCPU/r.PlainCPUUs, r.EdgeCPU/r.PlainCPUUs)
	}
	tw.Flush()
}

// printCodec prints the table of (c).
func (s *summary) printCodec(w io.Writer, tw *tabwriter.Writer) {
	fmt.Fprintln(w, "\n(c) envelopes in memory, this codec vs go-jose: open = parse + decrypt a request "+
		"(ParseEncryptedJSON + Decrypt), seal = encrypt + serialize a response (NewEncrypter + Encrypt + FullSerialize)")
	fmt.Fprintln(tw, "payload\topen hdc MB/s\topen go-jose MB/s\tratio\tseal hdc MB/s\tseal go-jose MB/s\tratio\t"+
		"hdc open µs\thdc seal µs\thdc open+seal µs\topen hdc allocs\topen go-jose allocs\topen hdc B/op\topen go-jose B/op\t")
	for _, r := range s.Codec {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.2f\t%.1f\t%.1f\t%.2f\t%.1f\t%.1f\t%.1f\t%d\t%d\t%d\t%d\t\n",
			r.Payload, r.HDCMBps, r.GoJoseMBps, r.Ratio, r.HDCSealMBps, r.GoJoseSealMBps, r.SealRatio,
			r.OpenUs, r.SealUs, r.OpenSealUs, r.HDCAllocs, r.GoJoseAllocs, r.HDCBytesOp, r.GoJoseBytesOp)
	}
	tw.Flush()
}

// printInstructions prints the instructions per request of each edge
// against plain Caddy's, then for each row where the edge's extra ones go.
func (s *summary) printInstructions(w io.Writer, tw *tabwriter.Writer) {
	fmt.Fprintf(w, "\n(e) instructions per request under callgrind (%d requests minus %d, each edge in its own process, %s)\n",
		instrMany, instrFew, strings.Join(instrEnv, " "))
	fmt.Fprintln(tw, "payload\thop\tplain\tedge\tedge/plain\toutside the collector: plain\tedge\tedge/plain\tbytes plain\tbytes edge\tedge/plain\tallocs plain\tallocs edge\t")
	for _, r := range s.Instructions {
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f\t%.3f\t%.0f\t%.0f\t%.3f\t%.0f\t%.0f\t%.3f\t%.1f\t%.1f\t\n", r.Payload, r.Hop, r.PlainInstr, r.EdgeInstr, r.Ratio,
			r.PlainOutside, r.EdgeOutside, r.OutsideRatio, r.PlainBytes, r.EdgeBytes, r.BytesRatio, r.PlainObjects, r.EdgeObjects)
	}
	tw.Flush()
	for _, r := range s.Instructions {
		fmt.Fprintf(w, "\n%s, %s: self instructions per request, plain and edge, by group, then the functions that add most\n", r.Payload, r.Hop)
		for _, g := range append(r.Groups, r.TopExtra...) {
			fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%+.0f\t\n", g.Name, g.Plain, g.Edge, g.Edge-g.Plain)
		}
		tw.Flush()
	}
}
