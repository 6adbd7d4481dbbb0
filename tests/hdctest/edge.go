package hdctest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
)

// FromAddr returns a client whose connections leave from the loopback
// address ip (127.0.0.0/8 is all the loopback interface's).
func FromAddr(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}
	return &http.Client{Transport: tr, Timeout: time.Minute}
}

// LoginFrom logs c in from the loopback address ip with secret, with
// X-Forwarded-For when xff is not empty, and returns the answer's status.
func (s *Stack) LoginFrom(ip, xff string, c *APIClient, secret string) int {
	s.T.Helper()
	body, _ := json.Marshal(map[string]string{"client_id": c.ID, "client_secret": secret})
	req, _ := http.NewRequest("POST", s.Edge+LoginPath, bytes.NewReader(body))
	req.Header.Set("Content-Type", JSONType)
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	resp, err := s.Checked(FromAddr(ip)).Do(req)
	if err != nil {
		s.T.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Output returns what the stack's process name (hdc-backend, hdc-edge)
// has written so far.
func (s *Stack) Output(name string) string {
	for _, p := range s.Procs {
		if p.Name == name {
			return p.Out.String()
		}
	}
	s.T.Fatalf("no %s in the stack", name)
	return ""
}

// EditRegistry rewrites the stack's key registry by hand, as an operator
// with an editor (or a tool of their own) would, and waits until the edge
// has read it.
func (s *Stack) EditRegistry(edit func(string) string) {
	s.T.Helper()
	b, err := os.ReadFile(s.registry)
	if err != nil {
		s.T.Fatal(err)
	}
	s.RegistryChanged(func() {
		tmp := s.registry + ".edit"
		if err := os.WriteFile(tmp, []byte(edit(string(b))), 0o600); err != nil {
			s.T.Fatal(err)
		}
		if err := os.Rename(tmp, s.registry); err != nil {
			s.T.Fatal(err)
		}
	})
}

// probes numbers the endpoints encryptedStatus registers.
var probes atomic.Int64

// EncryptedStatus registers a new endpoint for c, encrypted, and returns
// the status: 200 when the edge accepted c's key, 400 when it did not.
func (s *Stack) EncryptedStatus(c *APIClient, tk Tokens) int {
	s.T.Helper()
	return s.EncryptedStatusAt(s.Edge, c, tk)
}

// EncryptedStatusAt is EncryptedStatus through the edge at base.
func (s *Stack) EncryptedStatusAt(base string, c *APIClient, tk Tokens) int {
	s.T.Helper()
	probe := fmt.Sprintf(`{"endpoint":"https://example.org/probe-%d"}`, probes.Add(1))
	body := JoseEncrypt(s.T, c, []byte(probe))
	resp, err := s.Request(base, "POST", "/notification/v1/connect/webhook/subscriptions", body, map[string]string{
		"Authorization": "Bearer " + tk.AccessToken, JWEHeader: "JWE", "Content-Type": JSONType})
	if err != nil {
		s.T.Fatal(err)
	}
	return resp.Status
}

// edgeHeap returns the edge's live heap in bytes, after a garbage
// collection (Caddy's admin API: /debug/pprof/heap?gc=1, /debug/vars).
func (s *Stack) edgeHeap() uint64 {
	s.T.Helper()
	admin := s.AdminClient()
	resp, err := admin.Get(AdminURL + "/debug/pprof/heap?gc=1")
	if err != nil {
		s.T.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	resp, err = admin.Get(AdminURL + "/debug/vars")
	if err != nil {
		s.T.Fatal(err)
	}
	defer resp.Body.Close()
	var vars struct{ Memstats struct{ HeapAlloc uint64 } }
	if err := json.NewDecoder(resp.Body).Decode(&vars); err != nil {
		s.T.Fatal(err)
	}
	return vars.Memstats.HeapAlloc
}

// HoldIdleBodies opens conns connections that each announce a body of
// announced bytes and send 780, checks that the edge's live heap grows by
// less than bound, then that every connection times out.
func (s *Stack) HoldIdleBodies(t *testing.T, tk Tokens, announced, conns int, bound uint64) {
	base := s.edgeHeap()
	head := "GET /health/api/v1/fhir/retrieve?identifier=x HTTP/1.1\r\nHost: edge\r\n" +
		"Authorization: Bearer " + tk.AccessToken + "\r\nX-Encryption: JWE\r\nContent-Type: application/json\r\n" +
		fmt.Sprintf("Content-Length: %d\r\n\r\n", announced) + `{"protected":"` + strings.Repeat("A", 765)
	open := make([]net.Conn, 0, conns)
	defer func() {
		for _, conn := range open {
			conn.Close()
		}
	}()
	for range conns {
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.Edge, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, conn)
		if _, err := io.WriteString(conn, head); err != nil {
			t.Fatal(err)
		}
	}
	s.WaitFor("the edge to read every byte sent", func() bool { return unread(t, open) == 0 })
	peak := s.edgeHeap()
	t.Logf("edge heap with %d idle bodies: %.1f MiB, %.1f MiB above the %.1f MiB before",
		conns, float64(peak)/(1<<20), (float64(peak)-float64(base))/(1<<20), float64(base)/(1<<20))
	if peak > base+bound {
		t.Fatalf("the edge holds %d MiB more for %d idle bodies, over the bound of %d MiB",
			(peak-base)>>20, conns, bound>>20)
	}
	// The idle bodies time out: each connection gets an answer or is closed.
	deadline := time.Now().Add(30 * time.Second)
	for i, conn := range open {
		_ = conn.SetReadDeadline(deadline)
		if _, err := conn.Read(make([]byte, 1)); err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("connection %d still open after the read timeout: %v", i, err)
		}
	}
}

// unread sums the bytes that have reached the far ends of conns, TCP
// connections on loopback, but that the far end's process has not read:
// their receive queues in /proc/net/tcp. An end not listed yet counts 1.
func unread(t *testing.T, conns []net.Conn) int {
	t.Helper()
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	queues := map[string]int{} // "local remote", as /proc/net/tcp writes them → rx_queue
	for _, line := range strings.Split(string(table), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		_, rx, _ := strings.Cut(f[4], ":")
		n, err := strconv.ParseInt(rx, 16, 64)
		if err != nil {
			t.Fatalf("/proc/net/tcp: %q", line)
		}
		queues[f[1]+" "+f[2]] = int(n)
	}
	sum := 0
	for _, c := range conns {
		n, ok := queues[procNetAddr(t, c.RemoteAddr())+" "+procNetAddr(t, c.LocalAddr())]
		if !ok {
			n = 1
		}
		sum += n
	}
	return sum
}

// procNetAddr writes an IPv4 TCP address as /proc/net/tcp does: the
// address's 32 bits in the host's order, then the port, in hex.
func procNetAddr(t *testing.T, a net.Addr) string {
	t.Helper()
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil || !ap.Addr().Is4() {
		t.Fatalf("not an IPv4 TCP address: %v", a)
	}
	ip := ap.Addr().As4()
	return fmt.Sprintf("%08X:%04X", binary.NativeEndian.Uint32(ip[:]), ap.Port())
}

// accessLine is what the edge's access log says of a request.
type accessLine struct {
	Logger  string `json:"logger"`
	Status  int    `json:"status"`
	Request struct {
		RemotePort string          `json:"remote_port"`
		Proto      string          `json:"proto"`
		URI        string          `json:"uri"`
		TLS        json.RawMessage `json:"tls"`
	} `json:"request"`
}

// CheckAccessLines checks the edge's access lines after mark: n requests,
// each answered 200 over proto (and TLS exactly on a TLS site), and
// perConnection of them or more on one connection.
func (s *Stack) CheckAccessLines(t *testing.T, mark, n int, proto string, perConnection int) {
	t.Helper()
	var lines []accessLine
	testkit.Eventually(t, 5*time.Second, fmt.Sprintf("%d access lines", n), func() bool {
		lines = s.accessLines(mark)
		return len(lines) >= n
	})
	if len(lines) != n {
		t.Fatalf("%d access lines for %d requests", len(lines), n)
	}
	perConn := map[string]int{}
	for _, l := range lines {
		if l.Status != http.StatusOK || l.Request.Proto != proto || (len(l.Request.TLS) > 0) != (s.Roots != nil) {
			t.Fatalf("%s %s: %d over %s, TLS %s; want 200 over %s", l.Request.URI, l.Request.RemotePort,
				l.Status, l.Request.Proto, l.Request.TLS, proto)
		}
		perConn[l.Request.RemotePort]++
	}
	most := 0
	for _, k := range perConn {
		most = max(most, k)
	}
	if most < perConnection {
		t.Fatalf("requests per connection (by client port): %v; want %d or more on one", perConn, perConnection)
	}
}

// accessLines returns the edge's access lines after byte mark of its
// output.
func (s *Stack) accessLines(mark int) []accessLine {
	var lines []accessLine
	for _, text := range strings.Split(s.Output("hdc-edge")[mark:], "\n") {
		var l accessLine
		if json.Unmarshal([]byte(text), &l) == nil && strings.HasPrefix(l.Logger, "http.log.access") {
			lines = append(lines, l)
		}
	}
	return lines
}
