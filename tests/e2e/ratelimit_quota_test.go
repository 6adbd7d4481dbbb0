package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestUploadQuota: with a daily upload quota of 10 MiB, one edge counting
// in memory (hdc up's shape), three uploads of 3 MiB are stored; the
// fourth, whose declared length would pass the quota, is refused 429
// quota_exceeded before its body is read (the edge answers a request that
// has sent its headers only), with Retry-After and the quota's RateLimit
// fields.
func TestUploadQuota(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStackEnv(t, nil, []string{"HDC_RATELIMIT_REDIS=", "HDC_RATELIMIT_UPLOAD_BYTES_PER_DAY=10MiB"})
	c := s.NewClient("rl-quota")
	tk := s.Login(c, false, "")
	file := testkit.RandomBytes(3 << 20)
	for range 3 {
		s.Upload(c, tk, false, file, "")
	}
	body, ctype := hdctest.MultipartUpload(file)
	// Only the headers: the edge answers without reading the body, and
	// closes the connection, so a client still sending one may see its
	// write fail before it reads the answer.
	status, header, problemBody := headersOnly(t, s.Edge, hdctest.UploadPath, len(body), map[string]string{
		"Authorization": "Bearer " + tk.AccessToken, "Content-Type": ctype})
	testkit.WantProblem(t, status, header, []byte(problemBody), http.StatusTooManyRequests, "quota_exceeded")
	if header.Get("Retry-After") == "" || !strings.Contains(header.Get("RateLimit-Policy"), `"upload-bytes";q=10485760;w=86400;qu="content-bytes"`) ||
		!strings.HasPrefix(header.Get("RateLimit"), `"upload-bytes";r=`) {
		t.Fatalf("the quota's fields: Retry-After %q, RateLimit-Policy %q, RateLimit %q", header.Get("Retry-After"),
			header.Get("RateLimit-Policy"), header.Get("RateLimit"))
	}
}

// TestUploadQuotaUnknownLength: with a daily upload quota of 1 MiB, uploads
// that declare no length (an HTTP/1.1 chunked body, an HTTP/2 one without
// content-length; HTTP/3 in tests/interop), plain and encrypted, are
// counted as the edge reads them. The first two, about 850 KB, are stored;
// each of the next two would pass the quota and is refused 429
// quota_exceeded, with Retry-After and the quota's fields, and neither
// reaches the backend: its records and blob files are read after. The same
// in the edge's memory (hdc up's shape) and in Redis (a fleet's count).
func TestUploadQuotaUnknownLength(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"memory", "redis"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			env := []string{"HDC_RATELIMIT_REDIS=", "HDC_RATELIMIT_UPLOAD_BYTES_PER_DAY=1MiB"}
			if engine == "redis" {
				env = append(env, hdctest.RedisEnv(t)...)
			}
			s := hdctest.StartStackEnv(t, nil, env)
			c := s.NewClient("rl-unknown-" + engine)
			tk := s.Login(c, false, "")
			tr := &http.Transport{Protocols: new(http.Protocols)}
			tr.Protocols.SetUnencryptedHTTP2(true)
			h2c := s.Checked(&http.Client{Transport: tr, Timeout: time.Minute})
			for i, up := range []struct {
				proto   string
				encrypt bool
				want    int
			}{{"HTTP/1.1", false, 200}, {"HTTP/2.0", true, 200}, {"HTTP/1.1", true, 429}, {"HTTP/2.0", false, 429}} {
				body, header := hdctest.UploadBody(t, c, tk, up.encrypt, testkit.RandomBytes(300<<10)) // a file each: the blob store keeps one copy of equal files
				var r *hdctest.Response
				proto := "HTTP/1.1"
				if up.proto == "HTTP/1.1" {
					r = hdctest.PostChunked(t, s.Edge, hdctest.UploadPath, body, header)
				} else {
					r, proto = hdctest.PostUnknownLength(t, h2c, s.Edge+hdctest.UploadPath, body, header)
				}
				t.Logf("upload %d: %d bytes over %s, encrypted %v: %d, RateLimit %s", i+1, len(body), proto, up.encrypt, r.Status, r.Header.Get("RateLimit"))
				if proto != up.proto || r.Status != up.want {
					t.Fatalf("upload %d over %s, encrypted %v: %d over %s, want %d: %.300s", i+1, up.proto, up.encrypt, r.Status, proto, up.want, r.Body)
				}
				if up.want == http.StatusTooManyRequests {
					hdctest.WantQuotaExceeded(t, r, 1<<20)
				} else {
					hdctest.WantQuotaFields(t, r, 1<<20)
				}
			}
			if records, blobs := s.StoredUploads(c.Workspace); records != 2 || blobs != 2 {
				t.Fatalf("the backend stored %d records and %d blob files of the workspace's uploads, want the 2 accepted", records, blobs)
			}
		})
	}
}

// headersOnly sends a POST of path to the edge at base declaring a body of
// n bytes, sends none of it, and returns the status, the header and the
// body of the answer, which must come within 10 s.
func headersOnly(t *testing.T, base, path string, n int, header map[string]string) (int, http.Header, string) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var req strings.Builder
	fmt.Fprintf(&req, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", path, u.Host, n)
	for k, v := range header {
		fmt.Fprintf(&req, "%s: %s\r\n", k, v)
	}
	req.WriteString("\r\n")
	if _, err := conn.Write([]byte(req.String())); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a request whose body was not sent: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	return resp.StatusCode, resp.Header, string(b)
}
