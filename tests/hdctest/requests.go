package hdctest

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/testkit"
)

const (
	LoginPath     = "/connect-auth/v1/account/login"
	RefreshPath   = "/connect-auth/v1/account/refresh-token"
	RetrievePath  = "/health/api/v1/fhir/retrieve"
	SubsPath      = "/notification/v1/connect/webhook/subscriptions"
	UploadPath    = "/mr/api/v2/docs"
	JSONType      = "application/json"
	CompactType   = "application/jose"
	ProblemType   = "application/problem+json"
	JWEHeader     = "X-Encryption"
	JWEKidHeader  = "X-Encryption-Kid"
	Authorization = "Authorization"
)

// JoseEncrypt makes a request envelope with npm jose.
func JoseEncrypt(t testing.TB, c *APIClient, plaintext []byte) []byte {
	t.Helper()
	return npmJose.Encrypt(t, c, FormJSON, plaintext)
}

// Send calls the edge as c, in plain or encrypted form. An encrypted
// request is made, and its answer opened, by npm jose (sendSealed).
func (s *Stack) Send(c *APIClient, encrypt bool, method, path string, body []byte, header map[string]string) *Response {
	s.T.Helper()
	if encrypt {
		return s.sendSealed(SealedBy{npmJose, FormJSON}, c, method, path, body, header)
	}
	s.Creds.NoteJSON(body)
	r := s.Do(method, path, body, WithBodyType(header, body))
	if r.Header.Get(JWEHeader) != "" {
		s.T.Fatalf("%s %s: a plain request got an encrypted answer", method, path)
	}
	return r
}

// sendSealed calls the edge as c with a request encrypted by v's client in
// v's form (a body-less one asks for an answer in that form), and opens
// the answer with the same client: an encrypted request must get an
// encrypted answer, in the form of the request.
func (s *Stack) sendSealed(v SealedBy, c *APIClient, method, path string, body []byte, header map[string]string) *Response {
	s.T.Helper()
	h := WithBodyType(header, body)
	s.Creds.NoteJSON(body)
	h[JWEHeader] = "JWE"
	if body == nil {
		h[JWEKidHeader] = c.Kid
		if v.Form == FormCompact {
			h["Accept"] = CompactType
		}
	} else {
		body = v.Client.Encrypt(s.T, c, v.Form, body)
		h["Content-Type"] = v.requestType()
	}
	r := s.Do(method, path, body, h)
	if len(r.Body) == 0 && r.Status == 204 {
		return r // nothing to seal: a body-less answer carries no envelope
	}
	if r.Status == 401 && r.Header.Get("Content-Type") == ProblemType && r.Header.Get(JWEHeader) == "" {
		return r // refused by the edge's token check, before any key is established: plain by design
	}
	if r.Header.Get(JWEHeader) != "JWE" {
		s.T.Fatalf("%s %s: an encrypted request got a plain answer: %s", method, path, r)
	}
	if got, want := r.Header.Get("Content-Type"), v.answerType(); got != want {
		s.T.Fatalf("%s %s: the answer to a %s request is %s, want %s", method, path, v.Form, got, want)
	}
	r.Body, r.sealed = v.Client.decrypt(s.T, c, v.Form, r.Body), true
	s.Creds.NoteJSON(r.Body)
	return r
}

// WithBodyType copies header, adding Content-Type application/json when
// there is a body and none is named.
func WithBodyType(header map[string]string, body []byte) map[string]string {
	h := map[string]string{}
	for k, v := range header {
		h[k] = v
	}
	if body != nil && h["Content-Type"] == "" {
		h["Content-Type"] = JSONType
	}
	return h
}

// Tokens is a login or refresh answer.
type Tokens struct {
	AccessToken      string `json:"access_token"`
	ExpiresIn        int    `json:"expires_in"`
	RefreshToken     string `json:"refresh_token"`
	RefreshExpiresIn int    `json:"refresh_expires_in"`
}

func (s *Stack) Login(c *APIClient, encrypt bool, sharingKey string) Tokens {
	s.T.Helper()
	body := map[string]string{"client_id": c.ID, "client_secret": c.Secret}
	if sharingKey != "" {
		body["sharing_key"] = sharingKey
	}
	b, _ := json.Marshal(body)
	r := s.Send(c, encrypt, "POST", LoginPath, b, nil)
	if r.Status != 200 {
		s.T.Fatalf("login: %s", r)
	}
	var tk Tokens
	if err := json.Unmarshal(r.Body, &tk); err != nil || tk.AccessToken == "" || tk.RefreshToken == "" ||
		tk.ExpiresIn != 1800 || tk.RefreshExpiresIn != 30*24*3600 {
		s.T.Fatalf("login answered %s", r)
	}
	return tk
}

func Bearer(tk Tokens) map[string]string {
	return map[string]string{Authorization: "Bearer " + tk.AccessToken}
}

// ExpectProblem checks a problem+json answer with the given status and code.
func ExpectProblem(t testing.TB, r *Response, status int, code string) {
	t.Helper()
	header := r.Header
	if r.sealed { // the envelope is application/json, whatever it seals
		header = header.Clone()
		header.Set("Content-Type", problem.ContentType)
	}
	testkit.WantProblem(t, r.Status, header, r.Body, status, code)
}

func MultipartUpload(file []byte) ([]byte, string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	part, _ := w.CreateFormFile("file", "consultation.bin")
	_, _ = part.Write(file)
	_ = w.Close()
	return buf.Bytes(), w.FormDataContentType()
}

func JSONUpload(file []byte) []byte {
	return []byte(`{"file":"` + base64.StdEncoding.EncodeToString(file) + `"}`)
}

// Upload sends a file, multipart when plain and as the encrypted JSON form
// when encrypted, and returns the care_context_id.
func (s *Stack) Upload(c *APIClient, tk Tokens, encrypt bool, file []byte, query string) string {
	s.T.Helper()
	var r *Response
	if encrypt {
		r = s.Send(c, true, "POST", UploadPath+query, JSONUpload(file), Bearer(tk))
	} else {
		body, ctype := MultipartUpload(file)
		h := Bearer(tk)
		h["Content-Type"] = ctype
		r = s.Send(c, false, "POST", UploadPath+query, body, h)
	}
	m := r.JSON(s.T)
	id, _ := m["care_context_id"].(string)
	if r.Status != 200 || id == "" || m["document_id"] == nil || m["status"] == nil {
		s.T.Fatalf("upload: %s", r)
	}
	return id
}

// Retrieve fetches a record's Bundle, checks it with npm fhir and fhirpath,
// and checks that its DocumentReference describes file.
func (s *Stack) Retrieve(c *APIClient, tk Tokens, encrypt bool, id string, file []byte) map[string]any {
	s.T.Helper()
	r := s.Send(c, encrypt, "GET", RetrievePath+"?identifier="+url.QueryEscape(id), nil, Bearer(tk))
	return CheckRecord(s.T, r, file)
}

// CheckRecord checks a retrieve answer: a Bundle that npm fhir and fhirpath
// accept, whose DocumentReference describes file.
func CheckRecord(t testing.TB, r *Response, file []byte) map[string]any {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("retrieve: %s", r)
	}
	if out, err := Node(t, r.Body, "fhir.mjs"); err != nil {
		t.Fatalf("the Bundle fails npm fhir/fhirpath: %v\n%s", err, out)
	}
	bundle := r.JSON(t)
	CheckDocument(t, bundle, file)
	return bundle
}

// CheckDocument checks that a record's Bundle has a DocumentReference
// that describes file: its size and SHA-1.
func CheckDocument(t testing.TB, bundle map[string]any, file []byte) {
	t.Helper()
	sum := sha1.Sum(file)
	var found bool
	for _, e := range bundle["entry"].([]any) {
		res := e.(map[string]any)["resource"].(map[string]any)
		if res["resourceType"] != "DocumentReference" {
			continue
		}
		att := res["content"].([]any)[0].(map[string]any)["attachment"].(map[string]any)
		if att["size"] != float64(len(file)) || att["hash"] != base64.StdEncoding.EncodeToString(sum[:]) {
			t.Fatalf("DocumentReference says size %v hash %v; the file has %d bytes, SHA-1 %s",
				att["size"], att["hash"], len(file), base64.StdEncoding.EncodeToString(sum[:]))
		}
		found = true
	}
	if !found {
		t.Fatal("no DocumentReference in the Bundle")
	}
}

// RotateUnderLoad rotates c's key with hdc keys (run by ops) and retires
// the old one while three workers upload through edges, the client taking
// the new key as soon as the edges have it (ops.WaitForKey): no request
// may fail. Then the retired key is refused by every edge.
func RotateUnderLoad(t *testing.T, ops *Stack, edges []*Stack, c *APIClient, tk Tokens) {
	t.Helper()
	upload := func(e *Stack, k *APIClient, text string) *Response {
		return e.Do("POST", UploadPath, JoseEncrypt(t, k, JSONUpload([]byte(text))), map[string]string{
			Authorization: "Bearer " + tk.AccessToken, JWEHeader: "JWE", "Content-Type": JSONType})
	}
	var current atomic.Pointer[APIClient]
	current.Store(c)
	old := c
	var sent, failed atomic.Int64
	var firstFailure atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := current.Load()
				r := upload(edges[(w+i)%len(edges)], k, fmt.Sprintf("worker %d, file %d", w, i))
				sent.Add(1)
				if r.Status != 200 || r.Header.Get(JWEHeader) != "JWE" {
					failed.Add(1)
					firstFailure.CompareAndSwap(nil, fmt.Sprintf("%s: %s", k.Kid, r))
				}
			}
		})
	}
	// Each phase (the old key alone, both, the new alone) lasts until the
	// workers have answers to 10 more requests.
	testkit.Grows(t, &sent, 10, "10 uploads before the rotation")
	var rotated struct{ Kid, Secret string }
	ops.HDC(&rotated, "keys", "rotate", "--client", c.ID)
	next := *c
	next.Kid, next.Key = rotated.Kid, rotated.Secret
	ops.WaitForKey(next.Kid)
	current.Store(&next) // the client takes the new key once the edges have it
	testkit.Grows(t, &sent, 10, "10 uploads after the rotation")
	ops.HDC(nil, "keys", "retire", "--kid", old.Kid)
	testkit.Grows(t, &sent, 10, "10 uploads after the retirement")
	close(stop)
	wg.Wait()
	if sent.Load() < 30 {
		t.Fatalf("only %d requests ran", sent.Load())
	}
	if failed.Load() != 0 {
		t.Fatalf("%d of %d requests failed during the rotation; first: %v", failed.Load(), sent.Load(), firstFailure.Load())
	}
	t.Logf("%d encrypted uploads through %d edge(s) during rotate and retire, none failed", sent.Load(), len(edges))
	// The control: the retired key is refused now, by every edge.
	for i, e := range edges {
		testkit.Eventually(t, 10*time.Second, fmt.Sprintf("edge %d to refuse the retired key", i+1), func() bool {
			return upload(e, old, "late").Status == http.StatusBadRequest
		})
		ExpectProblem(t, upload(e, old, "late"), 400, "invalid_encryption")
	}
	c.Kid, c.Key = next.Kid, next.Key
}

func LoginBody(c *APIClient) []byte {
	return []byte(`{"client_id":"` + c.ID + `","client_secret":"` + c.Secret + `"}`)
}

// HDCCall runs the real hdc call as the client c, its secret and key in the
// environment, and returns its standard output and peak resident set size
// in KiB (getrusage's ru_maxrss on Linux).
func (s *Stack) HDCCall(c *APIClient, args ...string) ([]byte, int64) {
	s.T.Helper()
	rss := filepath.Join(s.T.TempDir(), "maxrss")
	call := append([]string{"call", "--base", s.Edge, "--client-id", c.ID, "--kid", c.Kid}, args...)
	cmd := exec.Command("/usr/bin/python3", append([]string{"-c", peakRSS, rss, Binary(s.T, "hdc")}, call...)...)
	cmd.Env = append(append([]string{}, s.Env...), "HDC_CLIENT_SECRET="+c.Secret, "HDC_ENCRYPTION_KEY="+c.Key)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		s.T.Fatalf("hdc call %s: %v\n%s", strings.Join(args, " "), err, errOut.Bytes())
	}
	s.Creds.Scan(s.T, "hdc call", errOut.String())
	b, err := os.ReadFile(rss)
	kib, perr := strconv.ParseInt(string(b), 10, 64)
	if err != nil || perr != nil {
		s.T.Fatalf("the peak RSS of hdc call: %v %v", err, perr)
	}
	return out.Bytes(), kib
}

// peakRSS runs the command of its arguments after the first and writes the
// command's peak resident set (KiB) to the file the first names. Linux
// counts in a child's peak the memory of the process it was started from
// until its exec (Go starts a child sharing the parent's memory, as vfork
// does), so started from the test process, the child's figure is at least
// the test process's size, many stacks at once; started from this small
// python process, it is the command's own, or python's few MiB.
const peakRSS = `import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(rc)`

// CheckAttachment fetches a record with hdc call -i -o and checks that its
// DocumentReference describes a file of size bytes and SHA-1 sum.
func (s *Stack) CheckAttachment(c *APIClient, encrypt, id string, size int, sum string) {
	s.T.Helper()
	bundle := filepath.Join(s.T.TempDir(), "bundle.json")
	head, _ := s.HDCCall(c, encrypt, "-i", "-o", bundle, "GET", RetrievePath, "--query", "identifier="+id)
	if !bytes.HasPrefix(head, []byte("HTTP/1.1 200 OK\r\n")) || !bytes.HasSuffix(head, []byte("\r\n\r\n")) {
		s.T.Fatalf("hdc call -i -o printed %q, want the status line and headers alone", head)
	}
	data, err := os.ReadFile(bundle)
	if err != nil {
		s.T.Fatal(err)
	}
	var b struct {
		Entry []struct {
			Resource struct {
				ResourceType string
				Content      []struct {
					Attachment struct {
						Size int
						Hash string
					}
				}
			}
		}
	}
	if err := json.Unmarshal(data, &b); err != nil {
		s.T.Fatalf("the record written by -o is not JSON: %v", err)
	}
	for _, e := range b.Entry {
		if r := e.Resource; r.ResourceType == "DocumentReference" && len(r.Content) == 1 {
			if a := r.Content[0].Attachment; a.Size != size || a.Hash != sum {
				s.T.Fatalf("the backend stored %d bytes, SHA-1 %s; the file has %d, %s", a.Size, a.Hash, size, sum)
			}
			return
		}
	}
	s.T.Fatalf("no DocumentReference in %.300s", data)
}

// SendConnection sends an encrypted request as c (npm jose seals it and
// opens the answer) over a connection of its own from the loopback
// address from (any, if empty), with these Connection fields.
func (s *Stack) SendConnection(c *APIClient, method, path string, body []byte, header map[string]string, connection []string, from string) *Response {
	s.T.Helper()
	req, err := http.NewRequest(method, s.Edge+path, bytes.NewReader(JoseEncrypt(s.T, c, body)))
	if err != nil {
		s.T.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", JSONType)
	req.Header.Set(JWEHeader, "JWE")
	req.Header["Connection"] = connection
	if from == "" {
		from = "127.0.0.1"
	}
	resp, err := s.Checked(FromAddr(from)).Do(req)
	if err != nil {
		s.T.Fatal(err)
	}
	defer resp.Body.Close()
	var answer bytes.Buffer
	if _, err := answer.ReadFrom(resp.Body); err != nil {
		s.T.Fatal(err)
	}
	r := &Response{Status: resp.StatusCode, Header: resp.Header, Body: answer.Bytes()}
	if resp.Header.Get(JWEHeader) == "JWE" {
		r.Body, r.sealed = npmJose.decrypt(s.T, c, FormJSON, r.Body), true
	}
	return r
}

// InternalCall sends a request to the backend's internal listener with
// client, and returns the answer's status and body; 0 when there is none.
func (s *Stack) InternalCall(client *http.Client, method, u, body string) (int, []byte) {
	s.T.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		s.T.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, []byte(fmt.Sprint(err))
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// KidStatus asks the edge for c's subscriptions with an encrypted answer
// under c's key, and returns the status: 200 when the edge accepted the
// key, 400 when it did not. It changes nothing.
func (s *Stack) KidStatus(c *APIClient, tk Tokens) int {
	s.T.Helper()
	return s.Do("GET", SubsPath, nil, map[string]string{"Authorization": "Bearer " + tk.AccessToken, JWEHeader: "JWE", JWEKidHeader: c.Kid}).Status
}

// routeStatuses calls every route that takes an access token as c with tk
// and returns the statuses.
func (s *Stack) routeStatuses(c *APIClient, tk Tokens, record string) map[string]int {
	s.T.Helper()
	upload, ctype := MultipartUpload([]byte("one more file"))
	uploadHeader := Bearer(tk)
	uploadHeader["Content-Type"] = ctype
	return map[string]int{
		"retrieve":    s.Send(c, false, "GET", RetrievePath+"?identifier="+url.QueryEscape(record), nil, Bearer(tk)).Status,
		"upload":      s.Send(c, false, "POST", UploadPath, upload, uploadHeader).Status,
		"subscribe":   s.Send(c, false, "POST", SubsPath, []byte(`{"endpoint":"https://rev.example.org/hook"}`), Bearer(tk)).Status,
		"list":        s.Send(c, false, "GET", SubsPath, nil, Bearer(tk)).Status,
		"unsubscribe": s.Send(c, false, "DELETE", SubsPath+"/no-such-subscription", nil, Bearer(tk)).Status,
	}
}

// RefusedWithin waits until every route answers tk with 401, and fails
// the test unless that happens within limit.
func (s *Stack) RefusedWithin(c *APIClient, tk Tokens, record string, limit time.Duration) time.Duration {
	s.T.Helper()
	start := time.Now()
	for {
		statuses := s.routeStatuses(c, tk, record)
		refused := 0
		for _, st := range statuses {
			if st == http.StatusUnauthorized {
				refused++
			}
		}
		took := time.Since(start)
		switch {
		case refused == len(statuses):
			return took
		case took > limit:
			s.T.Fatalf("after %v: %v, want 401 on every route", took, statuses)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// WantServed fails unless no route refuses tk.
func (s *Stack) WantServed(c *APIClient, tk Tokens, record string) {
	s.T.Helper()
	for route, st := range s.routeStatuses(c, tk, record) {
		if st == http.StatusUnauthorized || st >= 500 {
			s.T.Fatalf("%s: %d, want it served", route, st)
		}
	}
}
