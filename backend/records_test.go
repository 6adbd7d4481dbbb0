package backend

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/fhir/fhirtest"
	"github.com/health-data-connect/hdc/backend/records"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// wav is the start of a RIFF WAVE file, which content sniffing recognises.
var wav = append([]byte("RIFF\x24\x08\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00"), bytes.Repeat([]byte{0x11, 0x22}, 2000)...)

// multipartBody builds a form with one "file" part.
func multipartBody(t testing.TB, filename string, content []byte) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`)
	h.Set("Content-Type", "application/octet-stream")
	p, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	p.Write(content)
	w.Close()
	return &buf, w.FormDataContentType()
}

// upload posts content as a multipart form and wants success.
func (h *harness) upload(as []string, filename string, content []byte, query string) records.UploadResponse {
	h.t.Helper()
	body, ct := multipartBody(h.t, filename, content)
	res := h.do("POST", h.public+contract.PathUpload+query, body, append([]string{"Content-Type", ct}, as...)...)
	if res.StatusCode != 200 {
		h.t.Fatalf("upload: %d %s", res.StatusCode, res.body)
	}
	var up records.UploadResponse
	res.json(h.t, &up)
	return up
}

// retrieve gets and checks a record's document.
func (h *harness) retrieve(as []string, cc string) *fhirtest.Result {
	h.t.Helper()
	res := h.do("GET", h.public+contract.PathRetrieve+"?identifier="+url.QueryEscape(cc), nil, as...)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
		h.t.Fatalf("retrieve: %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), res.body)
	}
	doc, err := fhirtest.CheckDocument(res.body)
	if err != nil {
		h.t.Fatalf("the document breaks FHIR document rules:\n%v\n%s", err, res.body)
	}
	return doc
}

// postResources posts parser results on the internal listener.
func (h *harness) postResources(cc, body string) response {
	h.t.Helper()
	return h.do("POST", h.internal+"/internal/v1/records/"+url.PathEscape(cc)+"/resources", strings.NewReader(body),
		"Content-Type", "application/fhir+json")
}

func ofType(doc *fhirtest.Result, rt string) []map[string]any {
	var out []map[string]any
	for _, e := range doc.Entries {
		if e["resourceType"] == rt {
			out = append(out, e)
		}
	}
	return out
}

const parserResults = `{"resourceType":"Bundle","type":"collection","entry":[
	{"fullUrl":"urn:uuid:patient","resource":{"resourceType":"Patient","id":"pt","name":[{"text":"Asha Rao"}]}},
	{"resource":{"resourceType":"Observation","status":"final","code":{"text":"Temperature"},
	 "subject":{"reference":"Patient/pt"},"valueQuantity":{"value":38.20,"unit":"Cel"}}},
	{"resource":{"resourceType":"Condition","code":{"text":"Fever"},"subject":{"reference":"urn:uuid:patient"}}}]}`

func TestUploadRetrieveAndParse(t *testing.T) {
	h := start(t, nil)
	as := h.as(h.login(h.client("acme"), ""))

	up := h.upload(as, "visit.wav", wav, "?task=pii&task=smart&task=pii")
	if _, err := uuid.Parse(up.DocumentID); err != nil || up.CareContextID == "" || up.Status != "pending" {
		t.Fatalf("upload answer = %+v", up)
	}
	doc := h.retrieve(as, up.CareContextID)
	if doc.Composition["status"] != "preliminary" {
		t.Fatalf("status before parsing = %v", doc.Composition["status"])
	}
	if ext := doc.Composition["extension"].([]any)[0].(map[string]any); ext["valueString"] != up.CareContextID {
		t.Fatalf("care context extension = %v", ext)
	}
	refs := ofType(doc, "DocumentReference")
	if len(refs) != 1 {
		t.Fatalf("%d DocumentReferences", len(refs))
	}
	att := refs[0]["content"].([]any)[0].(map[string]any)["attachment"].(map[string]any)
	sum := sha1.Sum(wav)
	if att["contentType"] != "audio/wave" || att["size"] != float64(len(wav)) || att["hash"] != base64.StdEncoding.EncodeToString(sum[:]) ||
		att["title"] != "visit.wav" || att["creation"] == nil || refs[0]["status"] != "current" {
		t.Fatalf("attachment = %v", att)
	}
	if mi := refs[0]["masterIdentifier"].(map[string]any); mi["value"] != "urn:uuid:"+up.DocumentID {
		t.Fatalf("masterIdentifier = %v", mi)
	}

	res := h.postResources(up.CareContextID, parserResults)
	if res.StatusCode != 200 {
		t.Fatalf("parser results: %d %s", res.StatusCode, res.body)
	}
	var added records.ResourcesResponse
	res.json(t, &added)
	if added.Status != "parsed" || added.Version != 2 || len(added.ResourceIDs) != 3 {
		t.Fatalf("parser answer = %+v", added)
	}
	doc = h.retrieve(as, up.CareContextID)
	if doc.Composition["status"] != "final" {
		t.Fatalf("status after parsing = %v", doc.Composition["status"])
	}
	if subj := doc.Composition["subject"].(map[string]any)["reference"]; subj != "urn:uuid:"+added.ResourceIDs[0] {
		t.Fatalf("subject %v, want the parser's Patient", subj)
	}
	obs := ofType(doc, "Observation")
	if len(obs) != 1 || obs[0]["subject"].(map[string]any)["reference"] != "urn:uuid:"+added.ResourceIDs[0] {
		t.Fatalf("observation = %v", obs)
	}
	if !bytes.Contains(h.do("GET", h.public+contract.PathRetrieve+"?identifier="+up.CareContextID, nil, as...).body, []byte(`"value":38.20`)) {
		t.Fatal("a parser's number was not kept digit for digit")
	}

	// A second batch amends the document; its references to the first
	// batch's resources, by the names the parser gave them, resolve.
	second := `{"resourceType":"Bundle","type":"collection","entry":[
		{"fullUrl":"urn:uuid:pulse","resource":{"resourceType":"Observation","status":"final","code":{"text":"Pulse"},
		 "subject":{"reference":"Patient/pt"}}},
		{"resource":{"resourceType":"Condition","code":{"text":"Tachycardia"},"subject":{"reference":"urn:uuid:patient"},
		 "evidence":[{"detail":[{"reference":"urn:uuid:pulse"},{"reference":"Observation/` + added.ResourceIDs[1] + `"}]}]}}]}`
	res = h.postResources(up.CareContextID, second)
	if res.StatusCode != 200 {
		t.Fatalf("second batch: %d %s", res.StatusCode, res.body)
	}
	doc = h.retrieve(as, up.CareContextID) // checks that every reference resolves
	if doc.Composition["status"] != "amended" || len(ofType(doc, "Observation")) != 2 {
		t.Fatalf("after a second batch: %v", doc.Composition["status"])
	}
	for _, c := range ofType(doc, "Condition") {
		if c["subject"].(map[string]any)["reference"] != "urn:uuid:"+added.ResourceIDs[0] {
			t.Fatalf("condition of the second batch = %v", c)
		}
	}

	// A reference that resolves to nothing in the record is refused, and
	// so is a resource that takes a name the record has given already.
	wantProblem(t, h.postResources(up.CareContextID, `[{"resourceType":"Observation","subject":{"reference":"Patient/other"}}]`), 400, "invalid_resources")
	wantProblem(t, h.postResources(up.CareContextID, `[{"resourceType":"Observation","subject":{"reference":"urn:uuid:other"}}]`), 400, "invalid_resources")
	wantProblem(t, h.postResources(up.CareContextID, `[{"resourceType":"Patient","id":"pt"}]`), 409, "conflict")
	if doc := h.retrieve(as, up.CareContextID); len(ofType(doc, "Observation")) != 2 || len(ofType(doc, "Patient")) != 1 {
		t.Fatal("a refused batch changed the record")
	}
}

func TestUploadJSON(t *testing.T) {
	h := start(t, nil)
	as := h.as(h.login(h.client("acme"), ""))
	enc := base64.StdEncoding.EncodeToString(wav)
	// JSON escapes inside the string, whitespace around tokens.
	escaped := strings.ReplaceAll(strings.ReplaceAll(enc, "/", `\/`), "+", `\u002b`)
	body := "\n{ \"file\" :\t\"" + escaped + "\" }\n"
	res := h.do("POST", h.public+contract.PathUpload+"?task=classification", strings.NewReader(body), append([]string{"Content-Type", "application/json"}, as...)...)
	if res.StatusCode != 200 {
		t.Fatalf("JSON upload: %d %s", res.StatusCode, res.body)
	}
	var up records.UploadResponse
	res.json(t, &up)
	doc := h.retrieve(as, up.CareContextID)
	att := ofType(doc, "DocumentReference")[0]["content"].([]any)[0].(map[string]any)["attachment"].(map[string]any)
	sum := sha1.Sum(wav)
	if att["hash"] != base64.StdEncoding.EncodeToString(sum[:]) || att["size"] != float64(len(wav)) || att["title"] != "Uploaded file" {
		t.Fatalf("attachment = %v", att)
	}
}

func TestUploadErrors(t *testing.T) {
	h := start(t, func(c *Config) { c.UploadLimit = 1000 })
	as := h.as(h.login(h.client("acme"), ""))
	jsonBody := func(s string) (io.Reader, string) { return strings.NewReader(s), "application/json" }
	form := func(content []byte) (io.Reader, string) { return multipartBody(t, "a.bin", content) }
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, n)) }
	tests := []struct {
		name   string
		body   func() (io.Reader, string)
		query  string
		status int
		code   string
	}{
		{"empty JSON file", func() (io.Reader, string) { return jsonBody(`{"file":""}`) }, "", 400, "invalid_upload"},
		{"empty multipart file", func() (io.Reader, string) { return form(nil) }, "", 400, "invalid_upload"},
		{"not base64", func() (io.Reader, string) { return jsonBody(`{"file":"@@@@"}`) }, "", 400, "invalid_upload"},
		{"trailing garbage", func() (io.Reader, string) { return jsonBody(`{"file":"QUJD"} x`) }, "", 400, "invalid_upload"},
		{"duplicate file", func() (io.Reader, string) { return jsonBody(`{"file":"QUJD","file":"QUJD"}`) }, "", 400, "invalid_upload"},
		{"unknown member", func() (io.Reader, string) { return jsonBody(`{"name":"a","file":"QUJD"}`) }, "", 400, "invalid_upload"},
		{"not JSON", func() (io.Reader, string) { return jsonBody(`file=QUJD`) }, "", 400, "invalid_upload"},
		{"no file part", func() (io.Reader, string) {
			var buf bytes.Buffer
			w := multipart.NewWriter(&buf)
			w.WriteField("note", "x")
			w.Close()
			return &buf, w.FormDataContentType()
		}, "", 400, "invalid_upload"},
		{"multipart without boundary", func() (io.Reader, string) { return strings.NewReader("x"), "multipart/form-data" }, "", 400, "invalid_upload"},
		{"JSON over the limit", func() (io.Reader, string) { return jsonBody(`{"file":"` + b64(1001) + `"}`) }, "", 413, "payload_too_large"},
		{"JSON at the limit", func() (io.Reader, string) { return jsonBody(`{"file":"` + b64(1000) + `"}`) }, "", 200, ""},
		{"multipart over the limit", func() (io.Reader, string) { return form(make([]byte, 1001)) }, "", 413, "payload_too_large"},
		{"JSON body whitespace flood", func() (io.Reader, string) {
			return jsonBody(strings.Repeat(" ", int(records.MaxJSONUploadBody(1000))) + `{"file":"QUJD"}`)
		}, "", 413, "payload_too_large"},
		{"unknown task", func() (io.Reader, string) { return form([]byte("abc")) }, "?task=smart&task=srp", 400, "invalid_task"},
		{"empty task", func() (io.Reader, string) { return form([]byte("abc")) }, "?task=", 400, "invalid_task"},
		{"malformed query", func() (io.Reader, string) { return form([]byte("abc")) }, "?task=%zz", 400, "invalid_request"},
		{"text body", func() (io.Reader, string) { return strings.NewReader("abc"), "text/plain" }, "", 415, "unsupported_media_type"},
		{"an envelope without X-Encryption", func() (io.Reader, string) {
			return jsonBody(`{"protected":"eyJhbGciOiJkaXIifQ","iv":"AA","ciphertext":"AA","tag":"AA"}`)
		}, "", 400, "invalid_upload"},
		{"compact JWE without X-Encryption", func() (io.Reader, string) { return strings.NewReader("a..b.c.d"), "application/jose" }, "", 415, "unsupported_media_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, ct := tt.body()
			res := h.do("POST", h.public+contract.PathUpload+tt.query, body, append([]string{"Content-Type", ct}, as...)...)
			if tt.status == 200 {
				if res.StatusCode != 200 {
					t.Fatalf("%d %s", res.StatusCode, res.body)
				}
				return
			}
			wantProblem(t, res, tt.status, tt.code)
			if tt.status == 413 && !strings.Contains(string(res.body), "limit of 1000B") {
				t.Fatalf("the problem does not state the limit: %s", res.body)
			}
			if strings.Contains(tt.name, "without X-Encryption") && !strings.Contains(string(res.body), "no X-Encryption: JWE header") {
				t.Fatalf("the problem does not name the missing opt-in: %s", res.body)
			}
		})
	}
	body, ct := form([]byte("abc"))
	wantProblem(t, h.do("POST", h.public+contract.PathUpload, body, "Content-Type", ct), 401, "unauthenticated")
}

func TestRetrieveErrors(t *testing.T) {
	h := start(t, nil)
	as := h.as(h.login(h.client("acme"), ""))
	up := h.upload(as, "a.wav", wav, "")
	for _, tt := range []struct {
		query  string
		status int
		code   string
	}{
		{"", 400, "invalid_request"},
		{"?identifier=", 400, "invalid_request"},
		{"?identifier=" + up.CareContextID + "&identifier=" + up.CareContextID, 400, "invalid_request"},
		{"?identifier=%zz", 400, "invalid_request"},
		{"?identifier=" + uuid.NewString(), 404, "not_found"},
		{"?identifier=" + up.DocumentID, 404, "not_found"},
	} {
		wantProblem(t, h.do("GET", h.public+contract.PathRetrieve+tt.query, nil, as...), tt.status, tt.code)
	}
	wantProblem(t, h.do("GET", h.public+contract.PathRetrieve+"?identifier="+up.CareContextID, nil), 401, "unauthenticated")
	wantProblem(t, h.do("POST", h.public+contract.PathRetrieve, nil, as...), 405, "method_not_allowed")
}

func TestParserResultsErrors(t *testing.T) {
	h := start(t, nil)
	as := h.as(h.login(h.client("acme"), ""))
	up := h.upload(as, "a.wav", wav, "")
	wantProblem(t, h.postResources(uuid.NewString(), `[{"resourceType":"Observation"}]`), 404, "not_found")
	wantProblem(t, h.postResources(up.CareContextID, `[{"resourceType":"Bundle"}]`), 400, "invalid_resources")
	wantProblem(t, h.postResources(up.CareContextID, `not json`), 400, "invalid_resources")
	wantProblem(t, h.postResources(up.CareContextID, `[]`), 400, "invalid_resources")
	wantProblem(t, h.do("POST", h.internal+"/internal/v1/records/"+up.CareContextID+"/resources", strings.NewReader(`[]`), "Content-Type", "text/plain"), 415, "unsupported_media_type")
	big := `[{"resourceType":"Basic","text":"` + strings.Repeat("x", records.MaxResourcesBody) + `"}]`
	wantProblem(t, h.postResources(up.CareContextID, big), 413, "payload_too_large")
	// Nothing above changed the record.
	if doc := h.retrieve(as, up.CareContextID); doc.Composition["status"] != "preliminary" {
		t.Fatalf("status = %v", doc.Composition["status"])
	}
	// The parser endpoint is internal only.
	wantProblem(t, h.do("POST", h.public+"/internal/v1/records/"+up.CareContextID+"/resources", strings.NewReader(`[{"resourceType":"Basic"}]`),
		append([]string{"Content-Type", "application/json"}, as...)...), 404, "not_found")
}

func TestRoutesByListener(t *testing.T) {
	h := start(t, nil)
	for _, path := range []string{contract.PathJWKS, contract.PathHealth, contract.PathReady, contract.PathMetrics} {
		if path != contract.PathReady {
			wantProblem(t, h.do("GET", h.public+path, nil), 404, "not_found")
		}
		if res := h.do("GET", h.internal+path, nil); res.StatusCode != 200 {
			t.Errorf("internal %s: %d", path, res.StatusCode)
		}
	}
	// The public listener answers the edges' health checks, which carry
	// none of the headers the edge sets on a client's request.
	readyz, err := h.clientFor(h.public).Get(h.public + contract.PathReady)
	if err != nil || readyz.StatusCode != 200 {
		t.Fatalf("public %s without the edge's headers: %v %v", contract.PathReady, readyz, err)
	}
	readyz.Body.Close()
	for _, path := range []string{contract.PathLogin, contract.PathUpload, contract.PathSubscriptions} {
		wantProblem(t, h.do("POST", h.internal+path, strings.NewReader("{}"), "Content-Type", "application/json"), 404, "not_found")
	}
	res := h.do("PUT", h.public+contract.PathSubscriptions, nil)
	wantProblem(t, res, 405, "method_not_allowed")
	if allow := res.Header.Get("Allow"); allow != "POST, GET, HEAD" {
		t.Errorf("Allow = %q", allow)
	}
	wantProblem(t, h.do("GET", h.public+contract.PathSubscriptions+"/x", nil), 405, "method_not_allowed")
	wantProblem(t, h.do("GET", h.public+"/mr/api/v1/docs", nil), 404, "not_found")

	metrics := h.do("GET", h.internal+contract.PathMetrics, nil)
	for _, want := range []string{
		`hdc_backend_http_requests_total{code="404",listener="public",route="/"}`,
		`hdc_backend_http_requests_total{code="405",listener="public",route="` + contract.PathSubscriptions + `"}`,
		"go_goroutines",
	} {
		if !bytes.Contains(metrics.body, []byte(want)) {
			t.Errorf("metrics lack %s", want)
		}
	}
	jwks := h.do("GET", h.internal+contract.PathJWKS, nil)
	if jwks.Header.Get("Content-Type") != "application/json" || jwks.Header.Get("Cache-Control") != "max-age=60" ||
		jwks.Header.Get("Content-Length") != strconv.Itoa(len(jwks.body)) {
		t.Errorf("JWKS headers = %v", jwks.Header)
	}
	var ready map[string]string
	h.do("GET", h.internal+contract.PathReady, nil).json(t, &ready)
	if ready["status"] != "ready" {
		t.Errorf("readyz = %v", ready)
	}
}

// TestHopTLS: with the hop's mutual TLS, the public listener serves only
// the edge's certificate; a client without one, or with a certificate of
// another authority or another role, is refused before HTTP.
func TestHopTLS(t *testing.T) {
	h := start(t, withHop(t))
	c := h.client("acme")
	login := map[string]string{"client_id": c.ClientID, "client_secret": c.ClientSecret}
	res := h.postJSON(contract.PathLogin, login)
	if res.StatusCode != 200 {
		t.Fatalf("login through the hop: %d %s", res.StatusCode, res.body)
	}
	dir := filepath.Dir(h.cfg.HopCA)
	other := filepath.Join(t.TempDir(), "other")
	if err := pki.InitDir(other, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	strangers := map[string]*http.Client{
		"no certificate":                hopClient(t, dir, ""),
		"another authority's edge":      hopClient(t, other, pki.Edge),
		"the backend's own as a client": hopClient(t, dir, pki.Backend),
	}
	for name, client := range strangers {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", h.public+contract.PathSubscriptions, nil)
			req.Header.Set(contract.HeaderClientID, c.ClientID)
			req.Header.Set(contract.HeaderWorkspaceID, "acme")
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
				t.Fatalf("served: %d", resp.StatusCode)
			}
		})
	}
	// Plain HTTP to the TLS listener gets nothing of the API either.
	resp, err := http.Get(strings.Replace(h.public, "https", "http", 1) + contract.PathSubscriptions)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP served")
		}
	}
	// The internal listener's health routes need no certificate.
	anyone := hopClient(t, dir, "")
	for _, path := range []string{contract.PathHealth, contract.PathReady} {
		if resp, err := anyone.Get(h.internal + path); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s without a certificate: %v %v", path, resp, err)
		}
	}
}

// TestInternalRoles (second review, finding 2): with the hop's TLS, each
// route of the internal listener serves the certificates of its role
// alone, refuses the others and none with 403 (and a certificate of
// another authority at the handshake); the health routes serve anyone.
func TestInternalRoles(t *testing.T) {
	h := start(t, withHop(t))
	dir := filepath.Dir(h.cfg.HopCA)
	up := h.upload(h.as(h.login(h.client("acme"), "")), "visit.txt", []byte("a consultation"), "")
	routes := []struct {
		method, path, body string
		role               contract.Role // "" for anyone
	}{
		{"GET", contract.PathJWKS, "", contract.RoleEdge},
		{"POST", contract.PathEdgeReport, `{"instance":"0f8fad5b-d9cb-469f-a165-70867728950e","applied_seq":0,"uses":[]}`, contract.RoleEdge},
		{"POST", contract.PathEvents, `{"workspace_id":"acme","type":"appointment.created","data":{"appointment_id":"a-1"}}`, contract.RolePublisher},
		{"POST", "/internal/v1/records/" + up.CareContextID + "/resources", parserResults, contract.RoleParser},
		{"GET", contract.PathMetrics, "", contract.RoleScraper},
		{"GET", contract.PathHealth, "", ""},
		{"GET", contract.PathReady, "", ""},
	}
	other := filepath.Join(t.TempDir(), "other")
	if err := pki.InitDir(other, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	for _, role := range []pki.Role{pki.Publisher, pki.Parser, pki.Scraper} {
		if _, err := pki.IssueFromDir(other, pki.Leaf{Role: role}, time.Hour, false); err != nil {
			t.Fatal(err)
		}
	}
	clients := map[string]*http.Client{"no certificate": hopClient(t, dir, "")}
	for _, role := range contract.Roles {
		if role.IsPerson() { // the Admin API's roles: TestAdminRoleMatrix
			continue
		}
		clients[string(role)] = h.clientFor(h.internal + map[contract.Role]string{contract.RoleEdge: contract.PathJWKS,
			contract.RolePublisher: contract.PathEvents, contract.RoleParser: "/resources", contract.RoleScraper: contract.PathMetrics}[role])
	}
	for _, rt := range routes {
		for name, client := range clients {
			t.Run(rt.path+" as "+name, func(t *testing.T) {
				req := h.newRequest(rt.method, h.internal+rt.path, strings.NewReader(rt.body), "Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if rt.role == "" || string(rt.role) == name {
					if resp.StatusCode >= 300 {
						t.Fatalf("refused: %d %s", resp.StatusCode, body)
					}
					return
				}
				wantProblem(t, response{resp, body}, 403, "forbidden")
			})
		}
		t.Run(rt.path+" as another authority's "+string(rt.role), func(t *testing.T) {
			if rt.role == "" {
				rt.role = contract.RoleEdge
			}
			if resp, err := hopClient(t, other, pki.Role(rt.role)).Get(h.internal + rt.path); err == nil {
				resp.Body.Close()
				t.Fatalf("served: %d", resp.StatusCode)
			}
		})
	}
}

func TestGracefulShutdown(t *testing.T) {
	h := start(t, nil)
	as := h.as(h.login(h.client("acme"), ""))
	body, ct := multipartBody(t, "a.wav", wav)
	data, _ := io.ReadAll(body)
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.CloseWithError(errors.New("test over")) }) // unblocks the upload if the test fails early

	// The upload runs off the test goroutine, which alone may call
	// t.Fatal: its outcome comes back on a channel.
	type outcome struct {
		status int
		body   []byte
		err    error
	}
	answer := make(chan outcome, 1)
	req := h.newRequest("POST", h.public+contract.PathUpload, pr, append([]string{"Content-Type", ct}, as...)...)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			answer <- outcome{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		answer <- outcome{status: res.StatusCode, body: b, err: err}
	}()
	// Half the body is on its way, and the server is serving the request,
	// when it is told to stop.
	if _, err := pw.Write(data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "the upload to be in flight", func() bool {
		return bytes.Contains(h.do("GET", h.internal+contract.PathMetrics, nil).body, []byte(`hdc_backend_http_requests_in_flight{listener="public"} 1`))
	})
	stopped := make(chan error, 1)
	go func() { stopped <- h.stop() }()
	addr := strings.TrimPrefix(h.public, "http://")
	testkit.Eventually(t, 30*time.Second, "the public listener to close", func() bool {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			return true // the listener is closed: shutdown has begun
		}
		conn.Close()
		return false
	})
	if _, err := pw.Write(data[len(data)/2:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	select {
	case res := <-answer:
		if res.err != nil || res.status != http.StatusOK {
			t.Fatalf("request in flight during shutdown: %d %s %v", res.status, res.body, res.err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the request in flight got no answer")
	}
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("Serve = %v, want nil after a requested shutdown", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Serve did not return")
	}
}
