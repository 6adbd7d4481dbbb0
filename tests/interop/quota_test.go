package interop

import (
	"net/http"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestUploadQuotaHTTP3: through the reference Caddyfile over TLS, quic-go's
// HTTP/3 client uploads with no content-length, and the edge counts the
// bodies against a daily quota of 1 MiB as it reads them: a plain and an
// encrypted upload of 300 KiB (about 850 KB together) are stored; the next,
// which would pass the quota, is refused 429 quota_exceeded with the
// quota's fields, and the backend stored nothing of it.
func TestUploadQuotaHTTP3(t *testing.T) {
	t.Parallel()
	s := hdctest.StartTLSStackEnv(t, nil, []string{"HDC_RATELIMIT_UPLOAD_BYTES_PER_DAY=1MiB"})
	c := s.NewClient("quota-h3")
	tk := s.Login(c, false, "")
	rt := h3Transport(s)
	defer rt.(interface{ Close() error }).Close()
	h3 := s.Checked(&http.Client{Transport: rt, Timeout: time.Minute})
	for i, up := range []struct {
		encrypt bool
		want    int
	}{{false, http.StatusOK}, {true, http.StatusOK}, {false, http.StatusTooManyRequests}} {
		body, header := hdctest.UploadBody(t, c, tk, up.encrypt, testkit.RandomBytes(300<<10)) // a file each: the blob store keeps one copy of equal files
		r, proto := hdctest.PostUnknownLength(t, h3, s.Edge+hdctest.UploadPath, body, header)
		t.Logf("upload %d: %d bytes over %s, encrypted %v: %d, RateLimit %s", i+1, len(body), proto, up.encrypt, r.Status, r.Header.Get("RateLimit"))
		if proto != "HTTP/3.0" || r.Status != up.want {
			t.Fatalf("upload %d, encrypted %v: %d over %s, want %d over HTTP/3.0: %.300s", i+1, up.encrypt, r.Status, proto, up.want, r.Body)
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
}
