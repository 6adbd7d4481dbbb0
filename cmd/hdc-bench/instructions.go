package main

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The request counts of an edge's two runs under callgrind: the
// instructions of their difference are those of instrMany-instrFew
// requests, the start, the first requests and the stop falling out.
const (
	instrFew  = 200
	instrMany = 1200
)

// instrSizes are the payload sizes of the instruction count; a run of
// 1 MiB requests would take many minutes under callgrind.
var instrSizes = proxySizes[:2]

// The hops of the instruction count's rows.
const (
	clearHop = "HTTP/1.1 in clear text"
	tlsHop   = "HTTP/2, mutual TLS"
)

// instrRow compares the instructions per request of plain Caddy and of
// hdc-edge at one payload size, content encryption and hop, each counted
// by callgrind in a process of its own, and says where the edge's extra
// instructions go: by group of functions and the functions that add most.
type instrRow struct {
	Payload    string       `json:"payload"`
	Enc        string       `json:"enc"`
	Hop        string       `json:"hop"`
	Edge       string       `json:"edge"`
	PlainInstr float64      `json:"plain_instructions_per_request"`
	EdgeInstr  float64      `json:"edge_instructions_per_request"`
	Ratio      float64      `json:"ratio"`
	Groups     []instrGroup `json:"groups"`
	TopExtra   []instrGroup `json:"top_extra_functions"`
	// The instructions outside the collector's functions, whose share
	// depends on which collections fall in the runs: steadier from run to
	// run than the totals.
	PlainOutside float64 `json:"plain_instructions_outside_collector"`
	EdgeOutside  float64 `json:"edge_instructions_outside_collector"`
	OutsideRatio float64 `json:"ratio_outside_collector"`
	// The bytes and objects allocated per request, read from each
	// process's runtime in the same runs.
	PlainBytes   float64 `json:"plain_bytes_per_request"`
	EdgeBytes    float64 `json:"edge_bytes_per_request"`
	BytesRatio   float64 `json:"bytes_ratio"`
	PlainObjects float64 `json:"plain_allocations_per_request"`
	EdgeObjects  float64 `json:"edge_allocations_per_request"`
}

// instrGroup is the self cost per request of a group of functions, or of
// one function, in plain Caddy and in the edge.
type instrGroup struct {
	Name  string  `json:"name"`
	Plain float64 `json:"plain"`
	Edge  float64 `json:"edge"`
}

// instrCount is what callgrind counted of requests requests: the
// instructions in all, and each function's self cost; and what the process
// allocated.
type instrCount struct {
	requests int
	total    int64
	funcs    annotation
	heap     heapCount
}

func (c instrCount) perRequest(n int64) float64 { return float64(n) / float64(c.requests) }

// instrEnv runs this binary as an edge under callgrind with the settings
// that make its count repeat: GOMAXPROCS=1, so that no idle thread spins,
// and asynchronous preemption off, which callgrind does not survive.
var instrEnv = []string{"GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1"}

// benchInstructions counts, at each payload size, the instructions per
// request of plain Caddy and of the two hdc-edges (A128CBC-HS256 from the
// registry file, A256GCM from the key plane) over the clear-text hop, and
// at 1 KiB those of plain Caddy and the A128CBC-HS256 edge over the
// reference Caddyfile's hop, keeping callgrind's files in o.instrDir.
func benchInstructions(ctx context.Context, env *benchEnv, o options) ([]instrRow, error) {
	if err := os.MkdirAll(o.instrDir, 0o755); err != nil {
		return nil, err
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	var rows []instrRow
	for _, size := range instrSizes {
		if !listed(o.payloads, size.name) {
			continue
		}
		payload := jsonPayload(size.n)
		pairs := []struct {
			plain, edge string
			key         *benchKey
			hop         string
		}{
			{plainEdge, registryEdge, &env.cbc, clearHop},
			{plainEdge, planeEdge, &env.gcm, clearHop},
			{plainTLSEdge, tlsEdge, &env.cbc, tlsHop},
		}
		counted := map[string]instrCount{}
		for _, p := range pairs {
			if p.hop == tlsHop && size.name != "1KiB" {
				continue
			}
			plain, err := env.countOnce(ctx, client, counted, p.plain, size.name, env.plainRequest(payload), o.instrDir)
			if err != nil {
				return nil, err
			}
			edge, err := env.countOnce(ctx, client, counted, p.edge, size.name, env.encryptedRequest(*p.key, echoPath, payload), o.instrDir)
			if err != nil {
				return nil, err
			}
			rows = append(rows, newInstrRow(size.name, p.key.key.Enc(), p.hop, p.edge, plain, edge))
		}
	}
	return rows, nil
}

// countOnce is countInstructions of the edge named, remembered in counted
// for the next row that compares with it.
func (e *benchEnv) countOnce(ctx context.Context, client *http.Client, counted map[string]instrCount,
	name, size string, req request, dir string) (instrCount, error) {
	if c, ok := counted[name]; ok {
		return c, nil
	}
	c, err := e.countInstructions(ctx, client, name, size, req, dir)
	counted[name] = c
	return c, err
}

// countInstructions runs the edge named twice under callgrind, sends it
// instrFew requests, then instrMany, and returns what the difference
// counts: instrMany-instrFew requests.
func (e *benchEnv) countInstructions(ctx context.Context, client *http.Client, name, size string, req request, dir string) (instrCount, error) {
	var counts [2]instrCount
	for i, n := range []int{instrFew, instrMany} {
		path := filepath.Join(dir, fmt.Sprintf("%s-%s-%d.callgrind", name, size, n))
		heap, err := e.runUnderCallgrind(ctx, client, name, req, n, path)
		if err != nil {
			return instrCount{}, err
		}
		if counts[i], err = readCount(path, n); err != nil {
			return instrCount{}, err
		}
		counts[i].heap = heap
	}
	return counts[1].minus(counts[0]), nil
}

// runUnderCallgrind starts the edge named under callgrind, writing its
// count to path, sends it n requests one after the other, reads what it has
// allocated, and stops it.
func (e *benchEnv) runUnderCallgrind(ctx context.Context, client *http.Client, name string, req request, n int, path string) (heapCount, error) {
	w := wrapper{
		argv:     []string{"valgrind", "--tool=callgrind", "--callgrind-out-file=" + path},
		env:      instrEnv,
		patience: 5 * time.Minute,
	}
	ed, err := e.startEdgeUnder(name, true, w)
	if err != nil {
		return heapCount{}, err
	}
	defer ed.stop()
	for range n {
		if err := ctx.Err(); err != nil {
			return heapCount{}, err
		}
		resp, body, err := send(client, ed, req.sealed())
		if err != nil {
			return heapCount{}, err
		}
		if resp.StatusCode != http.StatusOK {
			return heapCount{}, fmt.Errorf("%s answered %d: %.200s", name, resp.StatusCode, body)
		}
	}
	client.CloseIdleConnections()
	heap, err := readHeapCount(client, ed.admin)
	if err != nil {
		return heapCount{}, fmt.Errorf("%s: %w", name, err)
	}
	ed.stopByAdmin()
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		return heapCount{}, fmt.Errorf("%s wrote no count under callgrind: %s", name, ed.logs.String())
	}
	return heap, nil
}

// stopByAdmin stops the edge through its admin API's /stop, which exits
// the process without a signal: callgrind, which Go's signal handling
// can make abort, then writes its count. Should that fail, stop.
func (ed *edge) stopByAdmin() {
	resp, err := http.Post("http://"+ed.admin+"/stop", "", nil)
	if err == nil {
		resp.Body.Close()
	}
	select {
	case <-ed.done:
	case <-time.After(ed.patience):
		ed.stop()
	}
}

// readCount reads the totals and the functions' costs of the callgrind
// output file at path, a run of n requests.
func readCount(path string, n int) (instrCount, error) {
	f, err := os.Open(path)
	if err != nil {
		return instrCount{}, err
	}
	defer f.Close()
	total, err := readTotals(f)
	if err != nil {
		return instrCount{}, fmt.Errorf("%s: %w", path, err)
	}
	funcs, err := annotate(path)
	return instrCount{requests: n, total: total, funcs: funcs}, err
}

// minus is the count of c's requests that b's did not have.
func (c instrCount) minus(b instrCount) instrCount {
	d := instrCount{requests: c.requests - b.requests, total: c.total - b.total,
		funcs: annotation{costs: map[string]int64{}, collector: map[string]bool{}},
		heap:  heapCount{Bytes: c.heap.Bytes - b.heap.Bytes, Objects: c.heap.Objects - b.heap.Objects}}
	for fn := range unionKeys(c.funcs.costs, b.funcs.costs) {
		d.funcs.costs[fn] = c.funcs.costs[fn] - b.funcs.costs[fn]
		d.funcs.collector[fn] = c.funcs.collector[fn] || b.funcs.collector[fn]
	}
	return d
}

// topExtra is how many of the functions that add most to the edge a row
// lists.
const topExtra = 15

func newInstrRow(size, enc, hop, edgeName string, plain, edge instrCount) instrRow {
	r := instrRow{Payload: rowName(size, enc), Enc: enc, Hop: hop, Edge: edgeName,
		PlainInstr: plain.perRequest(plain.total), EdgeInstr: edge.perRequest(edge.total)}
	r.Ratio = r.EdgeInstr / r.PlainInstr
	r.PlainBytes, r.EdgeBytes = plain.perRequest(plain.heap.Bytes), edge.perRequest(edge.heap.Bytes)
	r.BytesRatio = r.EdgeBytes / r.PlainBytes
	r.PlainObjects, r.EdgeObjects = plain.perRequest(plain.heap.Objects), edge.perRequest(edge.heap.Objects)
	pg, eg := byGroup(plain.funcs), byGroup(edge.funcs)
	for _, g := range append(groupNames(), otherGroup, collectorGroup) {
		r.Groups = append(r.Groups, instrGroup{g, plain.perRequest(pg[g]), edge.perRequest(eg[g])})
	}
	r.PlainOutside = plain.perRequest(plain.total - pg[collectorGroup])
	r.EdgeOutside = edge.perRequest(edge.total - eg[collectorGroup])
	r.OutsideRatio = r.EdgeOutside / r.PlainOutside
	var fns []instrGroup
	for fn := range unionKeys(plain.funcs.costs, edge.funcs.costs) {
		fns = append(fns, instrGroup{fn, plain.perRequest(plain.funcs.costs[fn]), edge.perRequest(edge.funcs.costs[fn])})
	}
	slices.SortFunc(fns, func(a, b instrGroup) int { return cmp.Compare(b.Edge-b.Plain, a.Edge-a.Plain) })
	r.TopExtra = fns[:min(topExtra, len(fns))]
	return r
}

func groupNames() []string {
	var names []string
	for _, g := range costGroups {
		names = append(names, g.name)
	}
	return names
}

// unionKeys returns the keys of a and b, each once.
func unionKeys(a, b map[string]int64) map[string]bool {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

// The goals of the instruction count: the edge's instructions and bytes
// allocated per 1 KiB request within 1.25 and 1.3 times plain Caddy's.
const (
	instrGoal = 1.25
	bytesGoal = 1.3
)

// instrTargets checks the 1 KiB rows against instrGoal and bytesGoal.
func instrTargets(rows []instrRow) []target {
	var ts []target
	for _, r := range rows {
		if r.Payload == rowName("1KiB", r.Enc) {
			about := " at 1 KiB " + r.Enc + " (" + r.Hop + "), times plain Caddy's"
			ts = append(ts,
				target{"edge instructions/req" + about, fmt.Sprintf("<= %.2f", instrGoal), r.Ratio, r.Ratio <= instrGoal},
				target{"edge bytes allocated/req" + about, fmt.Sprintf("<= %.1f", bytesGoal), r.BytesRatio, r.BytesRatio <= bytesGoal})
		}
	}
	return ts
}
