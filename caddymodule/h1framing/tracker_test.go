package h1framing

import (
	"strings"
	"testing"
)

const (
	get     = "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
	post    = "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
	chunked = "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nTrailer: x\r\n\r\n"
	both    = "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
)

func TestTracker(t *testing.T) {
	const all = -1
	tests := []struct {
		name    string
		in      string
		want    Verdict
		settled int // the bytes a server may be given, or all
	}{
		{"a GET", get, Continue, all},
		{"a header block not ended", get + "POST /x HTTP/1.1\r\nHost: a\r\n", Continue, len(get)},
		{"a request line not ended", post + "GET / HT", Continue, len(post)},
		{"a body then a GET", post + get, Continue, all},
		{"a chunked body with extensions and trailers, then a GET", chunked + get, Continue, all},
		{"both lengths", both + get, Ambiguous, 0},
		{"both lengths after two requests", get + post + both, Ambiguous, len(get + post)},
		{"both lengths, lower case, other order", "POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n", Ambiguous, 0},
		{"both, with a coding before chunked", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 3\r\n\r\n", Ambiguous, 0},
		{"both, with bare LF", "POST / HTTP/1.1\nContent-Length: 3\nTransfer-Encoding: chunked\n\n", Ambiguous, 0},
		{"empty lines before a request", "\r\n\r\n" + both, Ambiguous, 4},
		{"header-like text in a body", "POST / HTTP/1.1\r\nContent-Length: 39\r\n\r\nTransfer-Encoding: chunked\r\nContent-Le" + get, Continue, all},
		{"header-like text in a chunk", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n11\r\nContent-Length: 1\r\n0\r\n\r\n" + get, Continue, all},
		{"TLS", "\x16\x03\x01\x02\x00" + both, Untracked, all},
		{"HTTP/2", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + both, Untracked, all},
		{"an upgrade, not yet taken", "GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n" + both, Ambiguous, 38},
		{"a tunnel, not yet open", "CONNECT a:443 HTTP/1.1\r\n\r\n" + both, Ambiguous, 26},
		{"a Content-Length the server refuses", "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n" + both, Untracked, all},
		{"two different Content-Lengths", "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n" + both, Untracked, all},
		{"a coding without chunked", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n" + both, Untracked, all},
		{"a bad chunk size", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n" + both, Untracked, all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.settled == all {
				tt.settled = len(tt.in)
			}
			var whole Tracker
			v := whole.Feed([]byte(tt.in))
			if v != tt.want || whole.Settled() != int64(tt.settled) {
				t.Fatalf("Feed = %v, %d settled; want %v, %d", v, whole.Settled(), tt.want, tt.settled)
			}
			// Fed a byte at a time, the outcome is the same.
			var bytewise Tracker
			for i := range len(tt.in) {
				v = bytewise.Feed([]byte{tt.in[i]})
			}
			if v != tt.want || bytewise.Settled() != int64(tt.settled) {
				t.Fatalf("fed a byte at a time: %v, %d settled", v, bytewise.Settled())
			}
		})
	}
}

// FuzzTracker feeds any bytes, whole and split at any point: the tracker
// never panics, and the split changes neither its verdict nor what it
// settles.
func FuzzTracker(f *testing.F) {
	for _, s := range []string{get, post + get, chunked + get, both, get + both, "\x16\x03\x01", strings.Repeat("a", 300) + "\n"} {
		f.Add([]byte(s), uint16(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		var whole, split Tracker
		want := whole.Feed(data)
		i := int(cut) % (len(data) + 1)
		split.Feed(data[:i])
		got := split.Feed(data[i:])
		if got != want || split.Settled() != whole.Settled() {
			t.Fatalf("split at %d: %v, %d settled; whole: %v, %d", i, got, split.Settled(), want, whole.Settled())
		}
		if s := whole.Settled(); s < 0 || s > int64(len(data)) {
			t.Fatalf("%d settled of %d", s, len(data))
		}
	})
}
