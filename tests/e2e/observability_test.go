package e2e

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestEdgeAccessLogAndMetrics: the reference Caddyfile writes one JSON
// access line per request that carries the route but no credential, no
// query string value and no body, and serves request duration histograms
// by route on the admin listener.
func TestEdgeAccessLogAndMetrics(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	c := s.NewClient("acme")
	tk := s.Login(c, false, "")
	const record, marker = "record-id-in-a-query", "body-marker-never-logged"
	auth := map[string]string{"Authorization": "Bearer " + tk.AccessToken}
	r := s.Do("GET", hdctest.RetrievePath+"?identifier="+record, nil, auth)
	if r.Status != 404 {
		t.Fatalf("retrieve: %s", r)
	}
	// The answer's request id is in the edge's access line and the
	// backend's line for the same request.
	id := r.Header.Get("X-Request-Id")
	if len(id) != 36 {
		t.Fatalf("the answer's X-Request-Id is %q", id)
	}
	testkit.Eventually(t, 5*time.Second, "the request id in both logs", func() bool { // each logs after answering
		return strings.Contains(s.Output("hdc-edge"), `"uuid":"`+id+`"`) &&
			strings.Contains(s.Output("hdc-backend"), `"request_id":"`+id+`"`)
	})
	sub := []byte(`{"endpoint":"https://example.org/` + marker + `","event_names":["appointment.created"]}`)
	r = s.Send(c, false, "POST", hdctest.SubsPath, sub, auth)
	if r.Status != 201 && r.Status != 200 {
		t.Fatalf("subscribe: %s", r)
	}
	// The access line comes after the answer: wait for the last one.
	last := r.Header.Get("X-Request-Id")
	testkit.Eventually(t, 5*time.Second, "the subscription's access line", func() bool {
		return strings.Contains(s.Output("hdc-edge"), `"uuid":"`+last+`"`)
	})

	var uris []string
	for _, line := range strings.Split(s.Output("hdc-edge"), "\n") {
		if !strings.Contains(line, `"http.log.access`) {
			continue
		}
		var entry struct {
			Request map[string]any `json:"request"`
			Status  int            `json:"status"`
		}
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("an access line is not JSON: %s", line)
		}
		for _, secret := range []string{tk.AccessToken, c.Secret, record, marker} {
			if strings.Contains(line, secret) {
				t.Fatalf("the access log carries %.12s…: %s", secret, line)
			}
		}
		if _, ok := entry.Request["headers"]; ok {
			t.Fatalf("the access log carries the request's headers: %s", line)
		}
		uris = append(uris, entry.Request["uri"].(string))
	}
	joined := strings.Join(uris, "\n")
	for _, want := range []string{hdctest.LoginPath, hdctest.RetrievePath + "?identifier=REDACTED", hdctest.SubsPath} {
		if !strings.Contains(joined, want) {
			t.Fatalf("no access line for %s among:\n%s", want, joined)
		}
	}

	resp, err := s.HTTP.Get(s.Metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`hdc_edge_request_duration_seconds_bucket{code="404",method="GET",route="` + hdctest.RetrievePath + `"`,
		`hdc_edge_request_duration_seconds_count{code="200",method="POST",route="` + hdctest.LoginPath + `"}`,
		`caddy_http_request_duration_seconds_bucket{`,
	} {
		if !strings.Contains(string(text), want) {
			t.Fatalf("the edge's metrics lack %s", want)
		}
	}
}

// TestLimitsAreStated: a body over a route's limit gets a 413 problem that
// states the limit (Caddy's request_body refuses it by its announced
// length, before hdc_jwe, whose own answer states it too: a unit test
// holds that).
func TestLimitsAreStated(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	c := s.NewClient("acme")
	tk := s.Login(c, false, "")
	big := []byte(`{"endpoint":"https://example.org/` + strings.Repeat("a", 300<<10) + `"}`)
	r := s.Send(c, false, "POST", hdctest.SubsPath, big, map[string]string{"Authorization": "Bearer " + tk.AccessToken})
	if r.Status != 413 || !strings.Contains(string(r.Body), "limit of 256KiB") {
		t.Fatalf("got %s, want 413 stating the limit of 256KiB", r)
	}
	// Caddy writes this answer itself; it is as private as the rest.
	if r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("the edge's own 413 has headers %v", r.Header)
	}
}
