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
	if !maps.Equal(got, want) {
		t.Errorf("parseAnnotate = %v\nwant %v", got, want)
	}
}

func TestParseCostLine(t *testing.T) {
	for _, tc := range []struct {
		line, fn string
		n        int64
		ok       bool
	}{
		{"1,203 ( 0.46%)  /a/b.go:net/http.(*conn).serve [/bin/x]", "net/http.(*conn).serve", 1203, true},
		{"12  ???:memcpy [/lib/libc.so.6]", "memcpy", 12, true},
		{"7 (0.00%)  /a/b.go:type:.eq.net/http.Header", "type:.eq.net/http.Header", 7, true},
		{"262,264,415 (100.0%)  PROGRAM TOTALS", "", 262264415, false},
		{"Ir                   file:function", "", 0, false},
	} {
		t.Run(tc.line, func(t *testing.T) {
			fn, n, ok := parseCostLine(tc.line)
			if fn != tc.fn || (ok && n != tc.n) || ok != tc.ok {
				t.Errorf("parseCostLine = %q, %d, %v; want %q, %d, %v", fn, n, ok, tc.fn, tc.n, tc.ok)
			}
		})
	}
}

func TestGroupOf(t *testing.T) {
	for _, tc := range []struct{ fn, want string }{
		{"github.com/health-data-connect/hdc/internal/jwe.(*Key).Open", "ours"},
		{"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy.(*Handler).ServeHTTP", "Caddy"},
		{"github.com/caddyserver/certmagic.(*Config).X", "Caddy"},
		{"net/http.(*conn).serve", "net/http"},
		{"net/http/httptrace.ContextClientTrace", "net/http"},
		{"net/textproto.CanonicalMIMEHeaderKey", "net/http"},
		{"golang.org/x/net/http2.(*Framer).ReadFrame", "net/http"},
		{"net.(*conn).Read", "other"},
		{"runtime.mallocgc", "runtime and GC"},
		{"internal/runtime/maps.(*Map).getWithKeySmall", "runtime and GC"},
		{"crypto/internal/fips140/aes.encryptBlockAsm", "crypto"},
		{"golang.org/x/crypto/chacha20.X", "crypto"},
		{"go.uber.org/zap.(*Logger).With", "other"},
		{"memcpy", "other"},
		{"type:.eq.net/http.Header", "other"},
	} {
		t.Run(tc.fn, func(t *testing.T) {
			if got := groupOf(tc.fn); got != tc.want {
				t.Errorf("groupOf(%q) = %q, want %q", tc.fn, got, tc.want)
			}
		})
	}
}

func TestMinus(t *testing.T) {
	many := instrCount{requests: 1200, total: 1000, funcs: map[string]int64{"a": 700, "b": 300}}
	few := instrCount{requests: 200, total: 400, funcs: map[string]int64{"a": 100, "c": 50}}
	d := many.minus(few)
	want := map[string]int64{"a": 600, "b": 300, "c": -50}
	if d.requests != 1000 || d.total != 600 || !maps.Equal(d.funcs, want) {
		t.Errorf("minus = %+v, want 1000 requests, 600 in all, %v", d, want)
	}
	if got := d.perRequest(d.total); got != 0.6 {
		t.Errorf("perRequest = %v, want 0.6", got)
	}
}
