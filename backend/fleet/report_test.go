package fleet

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/store/sqlite"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/strictjson"
	"github.com/health-data-connect/hdc/internal/testkit"
)

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// instance is an edge's instance id.
const instance = "0f8fad5b-d9cb-469f-a165-70867728950e"

// errOther stands for a validation error that is not invalid_json.
var errOther = errors.New("other")

func TestParseReport(t *testing.T) {
	t.Parallel()
	tooMany := make([]contract.KidUse, contract.MaxEdgeReportUses+1)
	for i := range tooMany {
		tooMany[i] = contract.KidUse{Kid: fmt.Sprint("k", i), LastUsed: t0}
	}
	many, _ := json.Marshal(contract.EdgeReport{Instance: instance, Uses: tooMany})
	tests := []struct {
		name    string
		body    string
		uses    int
		wantErr error // nil: valid; strictjson.ErrSyntax or errOther
	}{
		{"uses", `{"instance":"` + instance + `","applied_seq":12,"uses":[{"kid":"k1","last_used":"2026-11-25T12:00:00.123456789Z"},{"kid":"k2","last_used":"2026-11-25T13:00:00+01:00"}]}`, 2, nil},
		{"no use", `{"instance":"` + instance + `","applied_seq":0,"uses":[]}`, 0, nil},
		{"uses left out", `{"instance":"` + instance + `","applied_seq":3}`, 0, nil},
		{"no instance", `{"applied_seq":3,"uses":[]}`, 0, errOther},
		{"instance not a UUID", `{"instance":"edge-1","applied_seq":3,"uses":[]}`, 0, errOther},
		{"instance in upper case", `{"instance":"` + strings.ToUpper(instance) + `","applied_seq":3,"uses":[]}`, 0, errOther},
		{"negative applied_seq", `{"instance":"` + instance + `","applied_seq":-1,"uses":[]}`, 0, errOther},
		{"invalid kid", `{"instance":"` + instance + `","applied_seq":3,"uses":[{"kid":"k 1","last_used":"2026-11-25T12:00:00Z"}]}`, 0, errOther},
		{"empty kid", `{"instance":"` + instance + `","applied_seq":3,"uses":[{"kid":"","last_used":"2026-11-25T12:00:00Z"}]}`, 0, errOther},
		{"no time", `{"instance":"` + instance + `","applied_seq":3,"uses":[{"kid":"k1"}]}`, 0, errOther},
		{"a kid twice", `{"instance":"` + instance + `","applied_seq":3,"uses":[{"kid":"k1","last_used":"2026-11-25T12:00:00Z"},{"kid":"k1","last_used":"2026-11-25T12:00:01Z"}]}`, 0, errOther},
		{"too many uses", string(many), 0, errOther},
		{"not a time", `{"instance":"` + instance + `","applied_seq":3,"uses":[{"kid":"k1","last_used":"yesterday"}]}`, 0, strictjson.ErrSyntax},
		{"unknown member", `{"instance":"` + instance + `","applied_seq":3,"uses":[],"edge":"e1"}`, 0, errOther},
		{"unknown member of a use", `{"instance":"` + instance + `","applied_seq":3,"uses":[{"kid":"k1","last_used":"2026-11-25T12:00:00Z","n":1}]}`, 0, errOther},
		{"member in another case", `{"Instance":"` + instance + `","applied_seq":3,"uses":[]}`, 0, errOther},
		{"duplicate member", `{"instance":"` + instance + `","applied_seq":3,"applied_seq":4,"uses":[]}`, 0, errOther},
		{"applied_seq a string", `{"instance":"` + instance + `","applied_seq":"3","uses":[]}`, 0, strictjson.ErrSyntax},
		{"not an object", `[]`, 0, strictjson.ErrSyntax},
		{"truncated", `{"instance":"` + instance + `"`, 0, strictjson.ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := ParseReport([]byte(tt.body))
			switch {
			case tt.wantErr == nil && err != nil:
				t.Errorf("refused: %v", err)
			case tt.wantErr == nil && len(r.Uses) != tt.uses:
				t.Errorf("%d uses, want %d", len(r.Uses), tt.uses)
			case tt.wantErr == errOther && (err == nil || errors.Is(err, strictjson.ErrSyntax)):
				t.Errorf("error %v, want a validation error", err)
			case tt.wantErr == strictjson.ErrSyntax && !errors.Is(err, strictjson.ErrSyntax):
				t.Errorf("error %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// FuzzEdgeReport parses arbitrary bodies as an edge's report: what it
// accepts keeps every rule, and its errors never quote a kid.
func FuzzEdgeReport(f *testing.F) {
	f.Add([]byte(`{"instance":"` + instance + `","applied_seq":12,"uses":[{"kid":"k1","last_used":"2026-11-25T12:00:00Z"}]}`))
	f.Add([]byte(`{"instance":"` + instance + `","applied_seq":0,"uses":[{"kid":"secret-kid","last_used":"0001-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"instance":"x","applied_seq":-5,"uses":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseReport(body)
		if err != nil {
			if strings.Contains(err.Error(), "secret-kid") {
				t.Fatalf("the error quotes a kid: %v", err)
			}
			return
		}
		if !contract.IsUUID(r.Instance) || r.AppliedSeq < 0 || len(r.Uses) > contract.MaxEdgeReportUses {
			t.Fatalf("accepted %+v", r)
		}
		seen := map[string]bool{}
		for _, u := range r.Uses {
			if !clientkey.ValidKid(u.Kid) || u.LastUsed.IsZero() || seen[u.Kid] {
				t.Fatalf("accepted the use %+v", u)
			}
			seen[u.Kid] = true
		}
	})
}

// newStore returns a new SQLite store holding the key k1.
func newStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hdc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.AddClientKey(t.Context(), store.ClientKey{Key: clientkey.Key{Kid: "k1", ClientID: "c1", Secret: "0123456789abcdef",
		Enc: "A128CBC-HS256", Status: clientkey.Active, CreatedAt: t0}},
		audit.Event{At: t0, Action: audit.KeyAdd, Outcome: audit.Success, Entity: audit.Entity{Kind: audit.EntityKey, ID: "k1"}}); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestReport posts reports to the handler: a report is recorded (a use
// later than the backend's clock counts as now), a body that is not one
// is refused with a problem, never a 5xx.
func TestReport(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	h := NewHandler(st, zap.NewNop())
	h.now = func() time.Time { return t0.Add(time.Minute) }
	report := func(uses string) string {
		return `{"instance":"` + instance + `","applied_seq":1,"uses":[` + uses + `]}`
	}
	tests := []struct {
		name, contentType, body string
		status                  int
		code                    string    // the problem's
		lastUsed                time.Time // k1's, after
	}{
		{"a use", "application/json", report(`{"kid":"k1","last_used":"2026-11-25T12:00:30Z"}`), http.StatusNoContent, "", t0.Add(30 * time.Second)},
		{"a use after now", "application/json", report(`{"kid":"k1","last_used":"2026-11-25T13:00:00Z"}`), http.StatusNoContent, "", t0.Add(time.Minute)},
		{"an unknown kid", "application/json", report(`{"kid":"k9","last_used":"2026-11-25T12:00:40Z"}`), http.StatusNoContent, "", t0.Add(time.Minute)},
		{"not JSON", "application/json", `{"instance":`, http.StatusBadRequest, problem.CodeInvalidJSON, t0.Add(time.Minute)},
		{"not a report", "application/json", `{"instance":"e1","applied_seq":1,"uses":[]}`, http.StatusBadRequest, problem.CodeInvalidRequest, t0.Add(time.Minute)},
		{"another media type", "text/plain", report(""), http.StatusUnsupportedMediaType, problem.CodeUnsupportedMedia, t0.Add(time.Minute)},
		{"too large", "application/json", report(strings.Repeat(" ", contract.MaxEdgeReport)), http.StatusRequestEntityTooLarge, problem.CodePayloadTooLarge, t0.Add(time.Minute)},
	}
	for _, tt := range tests { // in order: each step starts from the last one's store
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, contract.PathEdgeReport, bytes.NewReader([]byte(tt.body)))
			r.Header.Set("Content-Type", tt.contentType)
			w := httptest.NewRecorder()
			h.Report(w, r)
			if tt.code != "" {
				testkit.WantProblem(t, w.Code, w.Header(), w.Body.Bytes(), tt.status, tt.code)
			} else if w.Code != tt.status {
				t.Fatalf("answered %d %s, want %d", w.Code, w.Body, tt.status)
			}
			if k, err := st.ClientKey(t.Context(), "k1"); err != nil || !k.LastUsedAt.Equal(tt.lastUsed) {
				t.Fatalf("k1 last used %v (%v), want %v", k.LastUsedAt, err, tt.lastUsed)
			}
		})
	}
	edges, err := st.ListEdges(t.Context())
	if err != nil || len(edges) != 1 || edges[0].ID != instance || edges[0].AppliedSeq != 1 || !edges[0].LastContact.Equal(t0.Add(time.Minute)) ||
		edges[0].Source != "192.0.2.1" || edges[0].Name != "" {
		t.Fatalf("the edges: %+v, %v", edges, err)
	}
}

// reportAs returns a request of the report body from the client
// certificate name (serial serial) at the address from.
func reportAs(body, name string, serial int64, from string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, contract.PathEdgeReport, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.RemoteAddr = from + ":40000"
	leaf := &x509.Certificate{Subject: pkix.Name{CommonName: name}, SerialNumber: big.NewInt(serial)}
	r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{leaf}}}
	return r
}

// TestReportUnderItsCertificate: an instance belongs to the certificate's
// name that first reported it. Another name's report of it is refused
// (403 forbidden) and changes nothing, its uses neither; a new instance
// of a name from the address of another of that name replaces it (an
// edge restarted there), from another address it is another edge; the
// name's certificate renewed goes on with its instance.
func TestReportUnderItsCertificate(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	h := NewHandler(st, zap.NewNop())
	h.now = func() time.Time { return t0 }
	const (
		a = "0f8fad5b-d9cb-469f-a165-70867728950e"
		b = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
		c = "9b2f1f1e-2f3a-4c55-8c1e-3f0d7c1a2b3c"
	)
	use := `,"uses":[{"kid":"k1","last_used":"2026-11-25T11:59:00Z"}]`
	steps := []struct {
		name     string
		req      *http.Request
		status   int
		want     map[string]string // instance → certificate name and serial, after
		lastUsed time.Time         // k1's, after
	}{
		{"edge-1's first instance", reportAs(`{"instance":"`+a+`","applied_seq":1}`, "edge-1", 1, "192.0.2.1"), http.StatusNoContent,
			map[string]string{a: "edge-1/1"}, time.Time{}},
		{"edge-2 reports as edge-1's instance", reportAs(`{"instance":"`+a+`","applied_seq":9`+use+`}`, "edge-2", 2, "192.0.2.1"), http.StatusForbidden,
			map[string]string{a: "edge-1/1"}, time.Time{}},
		{"edge-1 restarted at its address", reportAs(`{"instance":"`+b+`","applied_seq":1`+use+`}`, "edge-1", 1, "192.0.2.1"), http.StatusNoContent,
			map[string]string{b: "edge-1/1"}, t0.Add(-time.Minute)},
		{"another edge of edge-1's certificate, elsewhere", reportAs(`{"instance":"`+c+`","applied_seq":1}`, "edge-1", 1, "192.0.2.2"), http.StatusNoContent,
			map[string]string{b: "edge-1/1", c: "edge-1/1"}, t0.Add(-time.Minute)},
		{"edge-1's certificate renewed", reportAs(`{"instance":"`+c+`","applied_seq":2}`, "edge-1", 3, "192.0.2.2"), http.StatusNoContent,
			map[string]string{b: "edge-1/1", c: "edge-1/3"}, t0.Add(-time.Minute)},
	}
	for _, step := range steps { // in order: each starts from the store the last one left
		t.Run(step.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.Report(w, step.req)
			if step.status == http.StatusForbidden {
				testkit.WantProblem(t, w.Code, w.Header(), w.Body.Bytes(), step.status, problem.CodeForbidden)
			} else if w.Code != step.status {
				t.Fatalf("answered %d %s, want %d", w.Code, w.Body, step.status)
			}
			edges, err := st.ListEdges(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, e := range edges {
				got[e.ID] = fmt.Sprint(e.Name, "/", e.Serial)
			}
			if !maps.Equal(got, step.want) {
				t.Errorf("the edges: %v, want %v", got, step.want)
			}
			if k, err := st.ClientKey(t.Context(), "k1"); err != nil || !k.LastUsedAt.Equal(step.lastUsed) {
				t.Errorf("k1 last used %v (%v), want %v", k.LastUsedAt, err, step.lastUsed)
			}
		})
	}
}
