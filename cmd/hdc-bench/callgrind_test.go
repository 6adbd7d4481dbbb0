package main

import (
	"maps"
	"os"
	"strings"
	"testing"
)

func TestReadTotals(t *testing.T) {
	sample, err := os.ReadFile("testdata/sample.callgrind")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, in string
		want     int64
		wantErr  bool
	}{
		{"totals over summary", string(sample), 262264799, false},
		{"summary alone", "events: Ir\nsummary: 1234\nfn=(1) main\n0 6\n", 1234, false},
		{"several events", "events: Ir Dr\ntotals: 77 12\n", 77, false},
		{"neither", "events: Ir\nfn=(1) main\n0 6\n", 0, true},
		{"empty totals", "totals:\n", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readTotals(strings.NewReader(tc.in))
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("readTotals = %d, %v; want %d, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestParseAnnotate(t *testing.T) {
	f, err := os.Open("testdata/sample.annotate")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := parseAnnotate(f)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"runtime.tryDeferToSpanScan":                                            14502978 + 4168966,
		"bufio.(*Reader).ReadByte":                                              5951448,
		"crypto/internal/fips140/sha256.blockAVX2.abi0":                         4066803,
		"github.com/caddyserver/caddy/v2/modules/caddyhttp.(*Server).ServeHTTP": 1203311,
		"github.com/health-data-connect/hdc/caddymodule.(*Auth).ServeHTTP":      812400,
		"net/textproto.CanonicalMIMEHeaderKey":                                  604002,
		"net/http.(*http2Framer).ReadFrame":                                     402112,
		"0x0000000006e42000":                                                    120,
		"memcpy":                                                                12,
	}
	if !maps.Equal(got.costs, want) {
		t.Errorf("parseAnnotate = %v\nwant %v", got.costs, want)
	}
	// tryDeferToSpanScan lies mostly in mgcmark_greenteagc.go, partly in
	// mheap.go (inlined): the collector's.
	for fn := range want {
		if c := got.collector[fn]; c != (fn == "runtime.tryDeferToSpanScan") {
			t.Errorf("%s: the collector's %v", fn, c)
		}
	}
}

func TestParseCostLine(t *testing.T) {
	for _, tc := range []struct {
		line, file, fn string
		n              int64
		ok             bool
	}{
		{"1,203 ( 0.46%)  /a/b.go:net/http.(*conn).serve [/bin/x]", "/a/b.go", "net/http.(*conn).serve", 1203, true},
		{"12  ???:memcpy [/lib/libc.so.6]", "???", "memcpy", 12, true},
		{"7 (0.00%)  /a/b.go:type:.eq.net/http.Header", "/a/b.go", "type:.eq.net/http.Header", 7, true},
		{"262,264,415 (100.0%)  PROGRAM TOTALS", "", "", 262264415, false},
		{"Ir                   file:function", "", "", 0, false},
	} {
		t.Run(tc.line, func(t *testing.T) {
			file, fn, n, ok := parseCostLine(tc.line)
			if ok != tc.ok || ok && (file != tc.file || fn != tc.fn || n != tc.n) {
				t.Errorf("parseCostLine = %q, %q, %d, %v; want %q, %q, %d, %v", file, fn, n, ok, tc.file, tc.fn, tc.n, tc.ok)
			}
		})
	}
}

func TestGroupOf(t *testing.T) {
	for _, tc := range []struct {
		fn        string
		collector bool
		want      string
	}{
		{"github.com/health-data-connect/hdc/internal/jwe.(*Key).Open", false, "ours"},
		{"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy.(*Handler).ServeHTTP", false, "Caddy"},
		{"github.com/caddyserver/certmagic.(*Config).X", false, "Caddy"},
		{"net/http.(*conn).serve", false, "net/http"},
		{"net/http/httptrace.ContextClientTrace", false, "net/http"},
		{"net/textproto.CanonicalMIMEHeaderKey", false, "net/http"},
		{"golang.org/x/net/http2.(*Framer).ReadFrame", false, "net/http"},
		{"net.(*conn).Read", false, "other"},
		{"runtime.mallocgc", false, "runtime"},
		{"runtime.tryDeferToSpanScan", true, "collector"},
		{"runtime.gcDrain", true, "collector"},
		{"internal/runtime/maps.(*Map).getWithKeySmall", false, "runtime"},
		{"crypto/internal/fips140/aes.encryptBlockAsm", false, "crypto"},
		{"golang.org/x/crypto/chacha20.X", false, "crypto"},
		{"go.uber.org/zap.(*Logger).With", false, "other"},
		{"memcpy", false, "other"},
		{"type:.eq.net/http.Header", false, "other"},
	} {
		t.Run(tc.fn, func(t *testing.T) {
			if got := groupOf(tc.fn, tc.collector); got != tc.want {
				t.Errorf("groupOf(%q) = %q, want %q", tc.fn, got, tc.want)
			}
		})
	}
}

func TestMinus(t *testing.T) {
	many := instrCount{requests: 1200, total: 1000, funcs: annotation{costs: map[string]int64{"a": 700, "b": 300}},
		heap: heapCount{Bytes: 5000, Objects: 50}}
	few := instrCount{requests: 200, total: 400, funcs: annotation{costs: map[string]int64{"a": 100, "c": 50}, collector: map[string]bool{"c": true}},
		heap: heapCount{Bytes: 1000, Objects: 20}}
	d := many.minus(few)
	want := map[string]int64{"a": 600, "b": 300, "c": -50}
	if d.requests != 1000 || d.total != 600 || !maps.Equal(d.funcs.costs, want) || !d.funcs.collector["c"] || d.funcs.collector["a"] {
		t.Errorf("minus = %+v, want 1000 requests, 600 in all, %v, c the collector's", d, want)
	}
	if d.heap != (heapCount{Bytes: 4000, Objects: 30}) {
		t.Errorf("minus: heap %+v, want 4000 bytes, 30 objects", d.heap)
	}
	if got := d.perRequest(d.total); got != 0.6 {
		t.Errorf("perRequest = %v, want 0.6", got)
	}
}
