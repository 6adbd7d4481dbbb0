package hdctest

import (
	"bufio"
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
)

// UploadBody is an upload of file as c sends it: multipart when plain, the
// JSON form sealed by npm jose when encrypted; with its headers, the
// bearer token's among them.
func UploadBody(t testing.TB, c *APIClient, tk Tokens, encrypt bool, file []byte) ([]byte, map[string]string) {
	t.Helper()
	h := Bearer(tk)
	if encrypt {
		h[JWEHeader], h["Content-Type"] = "JWE", JSONType
		return JoseEncrypt(t, c, JSONUpload(file)), h
	}
	body, ctype := MultipartUpload(file)
	h["Content-Type"] = ctype
	return body, h
}

// PostUnknownLength posts body to url with client, declaring no length
// (HTTP/2 and HTTP/3 send no content-length then), and returns the answer
// and the protocol it came over.
func PostUnknownLength(t testing.TB, client *http.Client, url string, body []byte, header map[string]string) (*Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, io.NopCloser(bytes.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s of %d bytes, no length declared: %v", url, len(body), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, resp.Proto
}

// PostChunked posts body to path at the edge at base (plain HTTP) over a
// connection of its own, as an HTTP/1.1 chunked body of 16 KiB chunks
// written by a goroutine of its own: the edge may answer, and close, before
// it has read the body, and a client that waited to finish writing could
// see its write fail before it reads the answer.
func PostChunked(t testing.TB, base, path string, body []byte, header map[string]string) *Response {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wrote := make(chan struct{})
	defer func() { conn.Close(); <-wrote }()
	go func() {
		defer close(wrote)
		w := bufio.NewWriter(conn)
		fmt.Fprintf(w, "POST %s HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n", path, u.Host)
		for k, v := range header {
			fmt.Fprintf(w, "%s: %s\r\n", k, v)
		}
		w.WriteString("\r\n")
		for rest := body; len(rest) > 0; {
			n := min(len(rest), 16<<10)
			fmt.Fprintf(w, "%x\r\n%s\r\n", n, rest[:n])
			rest = rest[n:]
			if w.Flush() != nil {
				return // the edge answered and closed
			}
		}
		w.WriteString("0\r\n\r\n")
		_ = w.Flush()
	}()
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a chunked POST %s of %d bytes: %v", path, len(body), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// WantQuotaExceeded checks an answer refusing an upload over a daily quota
// of quota bytes: 429 quota_exceeded, with Retry-After and the quota's
// RateLimit-Policy and RateLimit fields.
func WantQuotaExceeded(t testing.TB, r *Response, quota int64) {
	t.Helper()
	testkit.WantProblem(t, r.Status, r.Header, r.Body, http.StatusTooManyRequests, "quota_exceeded")
	WantQuotaFields(t, r, quota)
	if r.Header.Get("Retry-After") == "" {
		t.Fatalf("a refusal over the quota without Retry-After: %v", r.Header)
	}
}

// WantQuotaFields checks that an answer of the uploads route names the
// daily quota of quota bytes in its RateLimit-Policy and RateLimit fields.
func WantQuotaFields(t testing.TB, r *Response, quota int64) {
	t.Helper()
	policy := fmt.Sprintf(`"upload-bytes";q=%d;w=86400;qu="content-bytes"`, quota)
	if !strings.Contains(r.Header.Get("RateLimit-Policy"), policy) || !strings.Contains(r.Header.Get("RateLimit"), `"upload-bytes";r=`) {
		t.Errorf("%d answer without the quota's fields: RateLimit-Policy %q, RateLimit %q", r.Status,
			r.Header.Get("RateLimit-Policy"), r.Header.Get("RateLimit"))
	}
}

// StoredUploads counts what the stack's backend stored of workspace's
// uploads: its records in the database, and the files of the whole blob
// directory (each record has one; a file left by an upload that stored no
// record counts too).
func (s *Stack) StoredUploads(workspace string) (records, blobs int) {
	s.T.Helper()
	db, err := sql.Open("sqlite", filepath.Join(s.Dir, "backend", "hdc.db"))
	if err != nil {
		s.T.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(`SELECT COUNT(*) FROM records WHERE workspace_id = ?`, workspace).Scan(&records); err != nil {
		s.T.Fatal(err)
	}
	err = filepath.WalkDir(filepath.Join(s.Dir, "backend", "blobs"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			blobs++
		}
		return err
	})
	if err != nil {
		s.T.Fatal(err)
	}
	return records, blobs
}
