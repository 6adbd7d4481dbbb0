package scale

import (
	"fmt"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestFleetTraces: in the scale-out shape (two edges over two backends on
// PostgreSQL and S3, the secrets under a KMS), an encrypted upload through
// each edge, sent with a client's traceparent, is one trace in the OTLP
// receiver: the edge's span of the request, the backend's (whichever
// served it), the record's INSERT on PostgreSQL and the blob's write to
// S3. No exported span holds a
// credential, a body or a query value.
func TestFleetTraces(t *testing.T) {
	t.Parallel() // it times nothing: it runs beside the others that time nothing, after those that do
	col := hdctest.StartCollector(t)
	c := startClusterEnv(t, col.Env(), [2][]string{col.Env(), col.Env()})
	client := c.ops.NewClient("fleet-traces")
	tk := c.edges[0].Login(client, true, "")
	for i, e := range c.edges {
		trace := fmt.Sprintf("%032x", 0xf1ee7+i)
		h := hdctest.Bearer(tk)
		h["traceparent"] = "00-" + trace + "-00f067aa0ba902b7-01"
		if r := e.Send(client, true, "POST", hdctest.UploadPath, hdctest.JSONUpload([]byte(fmt.Sprint("a fleet's note ", i))), h); r.Status != 200 {
			t.Fatalf("upload through edge %d: %s", i+1, r)
		}
		col.WaitFor(fmt.Sprintf("edge %d's upload, from the edge to PostgreSQL and S3", i+1), func(spans []hdctest.Span) bool {
			return fleetUploadTraced(col.Trace(trace))
		})
	}
	c.ops.Creds.Scan(t, "the exported spans", col.Exported())
	if strings.Contains(col.Exported(), "a fleet's note") {
		t.Error("an exported span holds the upload's content")
	}
}

// fleetUploadTraced reports whether an upload's trace has its edge's span,
// a backend's, the INSERT of its record and the write of its blob to S3.
func fleetUploadTraced(spans []hdctest.Span) bool {
	has := map[string]bool{}
	for _, s := range spans {
		switch {
		case s.Name == "POST /mr/api/v2/docs":
			has[s.Service] = true
		case strings.Contains(s.Attributes["db.query.text"], "INSERT INTO records"):
			has["INSERT"] = true
		case s.Name == "blob put" && s.Attributes["hdc.blob.key"] != "":
			has["S3"] = true
		}
	}
	return has["hdc-edge"] && has["hdc-backend"] && has["INSERT"] && has["S3"]
}
