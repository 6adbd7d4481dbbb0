package backend

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/records"
	"github.com/health-data-connect/hdc/internal/contract"
)

// base64Stream yields n bytes of base64 text without allocating: "QUJD"
// (the encoding of "ABC") over and over.
type base64Stream struct{ n int64 }

func (s *base64Stream) Read(p []byte) (int, error) {
	if s.n == 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), s.n)]
	for i := range p {
		p[i] = "QUJD"[i%4]
	}
	// Keep the pattern aligned across reads.
	n := len(p) - len(p)%4
	if n == 0 {
		n = len(p)
	}
	s.n -= int64(n)
	return n, nil
}

// heapPeak samples the heap in use until stop is called.
type heapPeak struct {
	stop func() uint64
}

func sampleHeap() heapPeak {
	done := make(chan struct{})
	var (
		wg   sync.WaitGroup
		peak uint64
	)
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	})
	return heapPeak{stop: func() uint64 { close(done); wg.Wait(); return peak }}
}

// TestUploadJSONMemory uploads a 100 MiB file as JSON base64 (140 MB of
// body) through the real server, client and server in this process, and
// checks that memory does not follow the file's size. Run it alone for
// the figures:
//
//	go test -run TestUploadJSONMemory -v ./backend/
func TestUploadJSONMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 100 MiB")
	}
	const fileSize = 100 << 20
	h := start(t, func(c *Config) { c.UploadLimit = 128 << 20 })
	as := h.as(h.login(h.client("acme"), ""))
	// ceil(fileSize/3) unpadded quanta: the file is 104857602 bytes.
	n := int64((fileSize + 2) / 3 * 4)
	body := io.MultiReader(strings.NewReader(`{"file":"`), &base64Stream{n: n}, strings.NewReader(`"}`))

	req := h.newRequest("POST", h.public+contract.PathUpload, body, append([]string{"Content-Type", "application/json"}, as...)...)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := sampleHeap()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(res.Body)
	res.Body.Close()
	peakInUse := peak.stop()
	runtime.ReadMemStats(&after)
	if res.StatusCode != 200 {
		t.Fatalf("upload: %d %s", res.StatusCode, out)
	}
	var up records.UploadResponse
	response{res, out}.json(t, &up)
	doc := h.retrieve(as, up.CareContextID)
	att := ofType(doc, "DocumentReference")[0]["content"].([]any)[0].(map[string]any)["attachment"].(map[string]any)
	wantSize := float64(n / 4 * 3)
	if att["size"] != wantSize {
		t.Fatalf("stored size %v, want %v", att["size"], wantSize)
	}

	const mib = 1 << 20
	allocated := after.TotalAlloc - before.TotalAlloc
	growth := int64(peakInUse) - int64(before.HeapInuse)
	t.Logf("100 MiB JSON upload (%d body bytes): TotalAlloc +%.1f MiB, peak HeapInuse %.1f MiB (baseline %.1f MiB, growth %.1f MiB), %d mallocs",
		n+11, float64(allocated)/mib, float64(peakInUse)/mib, float64(before.HeapInuse)/mib, float64(growth)/mib, after.Mallocs-before.Mallocs)
	// Streaming means both stay far below the file's size.
	if allocated > 16*mib || growth > 16*mib {
		t.Fatalf("memory grows with the file: TotalAlloc +%d, peak heap growth %d", allocated, growth)
	}
}
