package e2e

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// The client's trace context (W3C's example): the edge's span is its
// child, and the backend's the edge's.
const (
	clientTrace  = "0af7651916cd43dd8448eb211c80319c"
	clientSpan   = "b7ad6b7169203331"
	clientParent = "00-" + clientTrace + "-" + clientSpan + "-01"
)

// TestTraceOfAnEncryptedUpload: through the reference Caddyfile over TLS,
// an encrypted upload sent with a client's traceparent is one trace in
// the OTLP receiver: the edge's span of the request (a child of the
// client's), its token check, key look-up, decryption and seal; the
// backend's span of the route (a child of the edge's), the database's
// write of the record and the blob store's. An event published with
// another traceparent is delivered by an attempt whose span links to that
// trace. No exported span holds a credential, a body or a query value.
func TestTraceOfAnEncryptedUpload(t *testing.T) {
	t.Parallel()
	col := hdctest.StartCollector(t)
	s := hdctest.StartTLSStackEnv(t,
		append(col.Env(), "HDC_WEBHOOK_ALLOW_NETS=127.0.0.0/8", "HDC_WEBHOOK_POLL_INTERVAL=100ms"), col.Env())
	c := s.NewClient("traced")
	tk := s.Login(c, true, "")
	h := hdctest.Bearer(tk)
	h["traceparent"] = clientParent
	if r := s.Send(c, true, "POST", hdctest.UploadPath, hdctest.JSONUpload([]byte("a traced consultation")), h); r.Status != 200 {
		t.Fatalf("upload: %s", r)
	}
	spans := col.WaitFor("the upload's trace, from the edge to the database", func(spans []hdctest.Span) bool {
		return len(uploadSpans(spans)) == len(uploadShape)
	})
	checkUploadTrace(t, uploadSpans(spans))
	// The edge's access line leads to the trace.
	if !strings.Contains(s.Output("hdc-edge"), `"trace_id":"`+clientTrace+`"`) {
		t.Error("no access line of the edge names the upload's trace")
	}

	const key = "whsec-for-the-traced-suite"
	rc := hdctest.NewWebhookReceiver(t, key, 0)
	if r := s.Send(c, true, "POST", hdctest.SubsPath, []byte(`{"endpoint":"`+rc.Srv.URL+`/t","protocol":"http",`+
		`"event_names":["appointment.created"],"signing_key":"`+key+`"}`), hdctest.Bearer(tk)); r.Status != 200 {
		t.Fatalf("subscribe: %s", r)
	}
	const eventTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	s.Env = append(s.Env, "TRACEPARENT=00-"+eventTrace+"-00f067aa0ba902b7-01")
	s.HDC(nil, "events", "publish", "--workspace", c.Workspace, "--type", "appointment.created", "--data", `{"appointment_id":"t-1"}`)
	testkit.Eventually(t, time.Minute, "the delivery", func() bool { return len(rc.Deliveries()) == 1 })
	col.WaitFor("a delivery attempt linked to the event's trace", func(spans []hdctest.Span) bool {
		return len(hdctest.Find(spans, func(s hdctest.Span) bool {
			return s.Name == "webhook attempt" && s.Attributes["hdc.outcome"] == "delivered" &&
				len(s.LinkedTraces) == 1 && s.LinkedTraces[0] == eventTrace && s.TraceID != eventTrace
		})) == 1
	})
	// A statement outside a request (a job's) is no trace of its own.
	for _, sp := range col.Spans() {
		if strings.HasPrefix(sp.Name, "sql.") && sp.ParentID == "" {
			t.Errorf("a statement's span is a root: %s %v", sp.Name, sp.Attributes)
		}
	}
	s.Creds.Scan(t, "the exported spans", col.Exported())
	for _, body := range []string{"a traced consultation", "t-1", key, "Go-http-client"} {
		if strings.Contains(col.Exported(), body) {
			t.Errorf("an exported span holds %q", body)
		}
	}
}

// uploadShape is the upload's trace: each span's service and name, and
// the name of its parent's ("" for a child of the client's span).
var uploadShape = map[string][2]string{
	"hdc-edge POST /mr/api/v2/docs":    {"", ""},
	"hdc-edge hdc_auth token":          {"hdc-edge", "POST /mr/api/v2/docs"},
	"hdc-edge hdc_jwe key":             {"hdc-edge", "hdc_jwe decrypt"},
	"hdc-edge hdc_jwe decrypt":         {"hdc-edge", "POST /mr/api/v2/docs"},
	"hdc-edge hdc_jwe encrypt":         {"hdc-edge", "POST /mr/api/v2/docs"},
	"hdc-backend POST /mr/api/v2/docs": {"hdc-edge", "POST /mr/api/v2/docs"},
	"hdc-backend blob put":             {"hdc-backend", "POST /mr/api/v2/docs"},
	"the record's INSERT":              {"hdc-backend", "POST /mr/api/v2/docs"},
}

// uploadSpans are the spans of the client's trace that uploadShape names,
// and the backend's statement that stores the record, by service and name.
func uploadSpans(spans []hdctest.Span) map[string]hdctest.Span {
	out := map[string]hdctest.Span{}
	for _, s := range spans {
		if s.TraceID != clientTrace {
			continue
		}
		key := s.Service + " " + s.Name
		if strings.Contains(s.Attributes["db.query.text"], "INSERT INTO records") {
			key = "the record's INSERT"
		}
		if _, ok := uploadShape[key]; ok {
			out[key] = s
		}
	}
	return out
}

// checkUploadTrace holds the upload's spans to uploadShape's parents and
// the edge's spans to their attributes.
func checkUploadTrace(t *testing.T, got map[string]hdctest.Span) {
	t.Helper()
	byID := map[string]hdctest.Span{}
	for _, s := range got {
		byID[s.SpanID] = s
	}
	for key, parent := range uploadShape {
		s := got[key]
		p, ok := byID[s.ParentID]
		switch {
		case parent[0] == "" && s.ParentID != clientSpan:
			t.Errorf("%s: parent %s, want the client's span %s", key, s.ParentID, clientSpan)
		case parent[0] != "" && (!ok || p.Service != parent[0] || p.Name != parent[1]):
			t.Errorf("%s: parent %s %s, want %s %s", key, p.Service, p.Name, parent[0], parent[1])
		}
	}
	decrypt := got["hdc-edge hdc_jwe decrypt"]
	if decrypt.Attributes["hdc.outcome"] != "ok" || decrypt.Attributes["hdc.enc"] != "A128CBC-HS256" ||
		decrypt.Attributes["hdc.kid"] == "" || decrypt.Attributes["hdc.bytes.in"] == "" {
		t.Errorf("decrypt's attributes: %v", decrypt.Attributes)
	}
	if k := got["hdc-edge hdc_jwe key"]; k.Attributes["hdc.outcome"] != "ok" || k.Attributes["hdc.key.cached"] == "" {
		t.Errorf("the key look-up's attributes: %v", k.Attributes)
	}
	if b := got["hdc-backend POST /mr/api/v2/docs"]; b.Attributes["http.response.status_code"] != "200" {
		t.Errorf("the backend's span: %v", b.Attributes)
	}
}

// TestUpTraces: hdc up honours the same variables. An encrypted upload by
// hdc call, which passes on the TRACEPARENT of its environment, is one
// trace of the stack's one process (service hdc-up): the edge's span of
// the request, its decryption, the backend's span of the route and the
// record's INSERT.
func TestUpTraces(t *testing.T) {
	t.Parallel()
	col := hdctest.StartCollector(t)
	hdc := hdctest.Binary(t, "hdc")
	dir := t.TempDir()
	listen, metrics, backendAddr, internal := testkit.FreeAddr(t), testkit.FreeAddr(t), testkit.FreeAddr(t), testkit.FreeAddr(t)
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_CACHE_HOME=" + filepath.Join(dir, "cache")}, col.Env()...)
	startUp(t, hdc, dir, env, []string{"up", "--listen", listen, "--metrics", metrics, "--backend-listen", backendAddr,
		"--internal-listen", internal}, io.Discard)
	file := filepath.Join(dir, "note.txt")
	if err := os.WriteFile(file, []byte("a traced note"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(hdc, "call", "--encrypt", "POST", "/mr/api/v2/docs", "--file", file)
	cmd.Dir, cmd.Env = dir, append(env, "TRACEPARENT="+clientParent)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hdc call: %v\n%s", err, out)
	}
	want := []string{"POST /mr/api/v2/docs", "POST /mr/api/v2/docs", "hdc_jwe decrypt", "INSERT INTO records"}
	col.WaitFor("the upload's trace in hdc up", func(spans []hdctest.Span) bool {
		var got []string
		for _, s := range spans {
			if s.TraceID != clientTrace || s.Service != "hdc-up" {
				continue
			}
			name := s.Name
			if strings.Contains(s.Attributes["db.query.text"], "INSERT INTO records") {
				name = "INSERT INTO records"
			}
			got = append(got, name)
		}
		return containsAll(got, want)
	})
}

// containsAll reports whether got holds every element of want, as many
// times as want does.
func containsAll(got, want []string) bool {
	left := slices.Clone(got)
	for _, w := range want {
		i := slices.Index(left, w)
		if i < 0 {
			return false
		}
		left = slices.Delete(left, i, i+1)
	}
	return true
}
