package hdcframing

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/caddymodule/edge"
)

// TestFramingRefuses serves through the wrapper on loopback: a request
// with both Content-Length and Transfer-Encoding is answered 400, counted
// in hdc_edge_ambiguous_framing_refusals_total, and its connection closed
// before the handler sees it; a request with one length is served.
func TestFramingRefuses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan string, 2)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		served <- string(body)
	})}
	go srv.Serve((&Framing{logger: zap.NewNop()}).WrapListener(ln))
	t.Cleanup(func() { srv.Close() })
	for _, tc := range []struct {
		name, request string
		status        int
		refused       float64
	}{
		{"one length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok", http.StatusOK, 0},
		{"both lengths", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
			http.StatusBadRequest, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := testutil.ToFloat64(edge.Metrics.FramingRefusals)
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, tc.request); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			answer, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s, %v", resp.StatusCode, tc.status, answer, err)
			}
			if got := testutil.ToFloat64(edge.Metrics.FramingRefusals) - before; got != tc.refused {
				t.Fatalf("%v refusals counted, want %v", got, tc.refused)
			}
			if tc.refused == 0 {
				if body := <-served; body != "ok" {
					t.Fatalf("the handler read %q", body)
				}
				return
			}
			if !strings.Contains(string(answer), `"status":400`) {
				t.Fatalf("the refusal is not a problem: %s", answer)
			}
			if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
				t.Fatal(err)
			}
			if b, err := br.ReadByte(); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("the connection goes on after a refusal (read %q, %v)", b, err)
			}
			select {
			case body := <-served:
				t.Fatalf("the handler saw the refused request: %q", body)
			default:
			}
		})
	}
}
