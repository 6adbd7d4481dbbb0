package e2e

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestLeakedLogsCannotActAsTheEdge (hardening finding 1): hdc up logs at
// debug level, Caddy's included, while a client logs in, calls the API and
// refreshes. No line carries a credential, and whatever headers the logs
// show the edge sending upstream, replayed straight to the backend's
// listener with another client's identity, are not served: a leaked log is
// not the edge's credential.
func TestLeakedLogsCannotActAsTheEdge(t *testing.T) {
	t.Parallel()
	hdc := hdctest.Binary(t, "hdc")
	dir := t.TempDir()
	listen, backendAddr, internal := testkit.FreeAddr(t), testkit.FreeAddr(t), testkit.FreeAddr(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_CACHE_HOME=" + filepath.Join(dir, "cache")}
	var logs hdctest.SyncBuffer
	startUp(t, hdc, dir, env, []string{"up", "--log-level", "debug", "--listen", listen, "--metrics", testkit.FreeAddr(t), "--admin", "off",
		"--backend-listen", backendAddr, "--internal-listen", internal}, &logs)

	var creds struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		WorkspaceID  string `json:"workspace_id"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "data", "demo-credentials.json"))
	if err != nil || json.Unmarshal(b, &creds) != nil {
		t.Fatalf("demo credentials: %v", err)
	}
	client := hdctest.CheckedClient(t, &http.Client{Timeout: 30 * time.Second}, "http://"+listen,
		&hdctest.Keyring{Plane: hdctest.PlaneKeys(filepath.Join(dir, "data", "tls"), "https://"+internal)})
	login, _ := json.Marshal(map[string]string{"client_id": creds.ClientID, "client_secret": creds.ClientSecret})
	resp, err := client.Post("http://"+listen+contract.PathLogin, "application/json", bytes.NewReader(login))
	if err != nil {
		t.Fatal(err)
	}
	var ledger hdctest.Credentials
	ledger.NoteJSON(b)
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	ledger.NoteJSON(answer)
	var pair struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	_ = json.Unmarshal(answer, &pair)
	req, _ := http.NewRequest("GET", "http://"+listen+contract.PathSubscriptions, nil)
	req.Header.Set("Authorization", "Bearer "+pair.AccessToken)
	if resp, err = client.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("listing through the edge: %v %v", err, resp)
	}
	resp.Body.Close()
	refresh, _ := json.Marshal(map[string]string{"refresh_token": pair.RefreshToken})
	req, _ = http.NewRequest("POST", "http://"+listen+contract.PathRefresh, bytes.NewReader(refresh))
	req.Header.Set("Authorization", "Bearer "+pair.AccessToken)
	req.Header.Set("Client-Id", creds.ClientID)
	req.Header.Set("Content-Type", "application/json")
	if resp, err = client.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("refreshing through the edge: %v %v", err, resp)
	}
	answer, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	ledger.NoteJSON(answer)
	// The refresh's access line is the edge's last word on it.
	testkit.Eventually(t, 10*time.Second, "the edge's access line of the refresh", func() bool {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `"http.log.access`) && strings.Contains(line, contract.PathRefresh) {
				return true
			}
		}
		return false
	})

	// No line, at debug level, carries a credential.
	for _, key := range []string{"ca-key.pem", "edge-key.pem", "backend-key.pem"} {
		ledger.NotePEMFile(t, "a private key of the hop", filepath.Join(dir, "data", "tls", key))
	}
	ledger.NoteSigningKeys(t, filepath.Join(dir, "data", "hdc.db"), keeper.KeyFileURL(filepath.Join(dir, "data", hdctest.KeeperFile)))
	ledger.Scan(t, "hdc up --log-level debug", logs.String())

	// Every header the edge's debug lines show going upstream.
	header := http.Header{}
	for _, m := range regexp.MustCompile(`"(X-[A-Za-z-]+)":\["([^"]*)"\]`).FindAllStringSubmatch(logs.String(), -1) {
		if !strings.EqualFold(m[1], "X-Forwarded-For") {
			header.Set(m[1], m[2])
		}
	}
	if !strings.Contains(logs.String(), "upstream roundtrip") {
		t.Fatalf("no upstream roundtrip line at debug level; logs:\n%s", hdctest.Tail(logs.String(), 2000))
	}
	// Replayed straight to the backend, as another tenant would forge it.
	header.Set(contract.HeaderClientID, creds.ClientID)
	header.Set(contract.HeaderWorkspaceID, creds.WorkspaceID)
	for _, scheme := range []string{"http", "https"} {
		req, _ := http.NewRequest("GET", scheme+"://"+backendAddr+contract.PathSubscriptions, nil)
		req.Header = header.Clone()
		resp, err := insecureClient().Do(req)
		if err != nil {
			continue // refused at the transport: as it should be
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatalf("the backend served a request replayed from the logs over %s (headers %v)", scheme, redacted(header))
		}
	}
}

// insecureClient talks TLS without checking the server: an attacker's
// client, which has no certificate of its own either.
func insecureClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// redacted lists header names only, for a failure message.
func redacted(h http.Header) []string {
	var names []string
	for k := range h {
		names = append(names, k)
	}
	return names
}

// TestStrangersCannotLockAClientOut (hardening finding 3): ten wrong
// secrets for a client from 127.0.0.2 lock that client out from 127.0.0.2
// only; the right secret from 127.0.0.3 still logs in.
func TestStrangersCannotLockAClientOut(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	c := s.NewClient("clinic-lockout")
	for i := range 10 {
		if got := s.LoginFrom("127.0.0.2", "", c, "hdc_cs_wrong"); got != http.StatusUnauthorized {
			t.Fatalf("wrong secret %d: %d", i, got)
		}
	}
	if got := s.LoginFrom("127.0.0.2", "", c, c.Secret); got != http.StatusTooManyRequests {
		t.Fatalf("the right secret from the failing address: %d, want 429", got)
	}
	if got := s.LoginFrom("127.0.0.3", "", c, c.Secret); got != http.StatusOK {
		t.Fatalf("the right secret from another address: %d, want 200", got)
	}
}

// TestTrustedProxiesNameTheClient: behind a load balancer the edge trusts
// (HDC_TRUSTED_PROXIES), the source of a login is the client's address in
// X-Forwarded-For, not the balancer's; from anyone else the header is not
// believed.
func TestTrustedProxiesNameTheClient(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStackEnv(t, nil, []string{"HDC_TRUSTED_PROXIES=127.0.0.2/32"})
	c := s.NewClient("clinic-behind-lb")
	for i := range 10 {
		if got := s.LoginFrom("127.0.0.2", "203.0.113.5", c, "hdc_cs_wrong"); got != http.StatusUnauthorized {
			t.Fatalf("wrong secret %d: %d", i, got)
		}
	}
	tests := []struct {
		name, from, xff string
		want            int
	}{
		{"the failing client behind the balancer", "127.0.0.2", "203.0.113.5", http.StatusTooManyRequests},
		{"the failing client, spoofing an address before its own", "127.0.0.2", "198.51.100.1, 203.0.113.5", http.StatusTooManyRequests},
		{"another client behind the balancer", "127.0.0.2", "203.0.113.6", http.StatusOK},
		{"a stranger claiming the failing address", "127.0.0.4", "203.0.113.5", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.LoginFrom(tt.from, tt.xff, c, c.Secret); got != tt.want {
				t.Fatalf("login: %d, want %d", got, tt.want)
			}
		})
	}
}

// TestMalformedEncryptionOptInIsRefused (hardening finding 4): anything but
// exactly one X-Encryption field whose value is JWE is refused with 400
// invalid_encryption_header before the backend sees the request; a client
// that asked for encryption never gets plaintext.
func TestMalformedEncryptionOptInIsRefused(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	c := s.NewClient("clinic-optin")
	tk := s.Login(c, false, "")
	id := s.Upload(c, tk, false, []byte("a consultation"), "")
	path := "/health/api/v1/fhir/retrieve?identifier=" + id
	tests := []struct {
		name   string
		values []string
	}{
		{"two values in one field", []string{"JWE, JWE"}},
		{"two fields", []string{"JWE", "JWE"}},
		{"an unknown value", []string{"x"}},
		{"an empty value", []string{""}},
		{"JWE with a parameter", []string{"JWE;v=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := strings.Count(s.Output("hdc-backend"), "GET /health/api/v1/fhir/retrieve")
			req, _ := http.NewRequest("GET", s.Edge+path, nil)
			req.Header.Set("Authorization", "Bearer "+tk.AccessToken)
			req.Header.Set(hdctest.JWEKidHeader, c.Kid)
			for _, v := range tt.values {
				req.Header.Add(hdctest.JWEHeader, v)
			}
			resp, err := s.HTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			testkit.WantProblem(t, resp.StatusCode, resp.Header, body, http.StatusBadRequest, "invalid_encryption_header")
			if strings.Contains(string(body), "Bundle") {
				t.Fatal("the record in plaintext")
			}
			// A plain retrieve after it reaches the backend: once the
			// backend has logged that one, it would have logged this one.
			if r := s.Send(c, false, "GET", path, nil, hdctest.Bearer(tk)); r.Status != http.StatusOK {
				t.Fatalf("the plain retrieve after it: %s", r)
			}
			var after int
			testkit.Eventually(t, 10*time.Second, "the backend's line of the plain retrieve", func() bool {
				after = strings.Count(s.Output("hdc-backend"), "GET /health/api/v1/fhir/retrieve")
				return after > before
			})
			if after != before+1 {
				t.Fatal("the request reached the backend")
			}
		})
	}
	// Exactly one JWE, in any case, is the opt-in.
	r := s.Send(c, true, "GET", path, nil, map[string]string{"Authorization": "Bearer " + tk.AccessToken})
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"Bundle"`) {
		t.Fatalf("encrypted retrieve: %s", r)
	}
}

// TestRegistryRefusesAmbiguousFiles (hardening finding 7): a registry file
// with a case variant of a member, a repeated member at any depth, or no
// keys member is refused, and the edge keeps the last good registry: a
// retired key does not come back as active, a key's secret is not replaced,
// and every key does not vanish.
func TestRegistryRefusesAmbiguousFiles(t *testing.T) {
	t.Parallel()
	s := hdctest.StartFileStack(t)
	c := s.NewClient("clinic-registry")
	tk := s.Login(c, false, "")
	if got := s.EncryptedStatus(c, tk); got != http.StatusOK {
		t.Fatalf("the new key: %d", got)
	}
	// A retired key does not come back with "Status":"active".
	retired := *c
	s.RegistryChanged(func() { s.HDC(nil, "keys", "retire", "--kid", c.Kid, "--force") }) // its last key
	if got := s.EncryptedStatus(&retired, tk); got != http.StatusBadRequest {
		t.Fatalf("the retired key: %d", got)
	}
	s.EditRegistry(func(f string) string {
		return strings.Replace(f, `"status": "retired"`, `"status": "retired", "Status": "active"`, 1)
	})
	if got := s.EncryptedStatus(&retired, tk); got != http.StatusBadRequest {
		t.Fatalf("the retired key after a case variant of status: %d, want 400", got)
	}
	s.EditRegistry(func(f string) string { return strings.Replace(f, `, "Status": "active"`, "", 1) })
	// A second "SECRET" does not replace a live key's secret.
	var k struct{ Kid, Secret string }
	s.HDC(&k, "keys", "add", "--client", c.ID)
	live := *c
	live.Kid, live.Key = k.Kid, k.Secret
	if got := s.EncryptedStatus(&live, tk); got != http.StatusOK {
		t.Fatalf("the second key: %d", got)
	}
	forged := live
	forged.Key = "forged-key-16byt"
	s.EditRegistry(func(f string) string {
		return strings.Replace(f, `"kid": "`+k.Kid+`"`, `"kid": "`+k.Kid+`", "SECRET": "`+forged.Key+`"`, 1)
	})
	if got := s.EncryptedStatus(&forged, tk); got != http.StatusBadRequest {
		t.Fatalf("a secret added as SECRET: %d, want 400", got)
	}
	if got := s.EncryptedStatus(&live, tk); got != http.StatusOK {
		t.Fatalf("the live key after a duplicate secret: %d, want 200", got)
	}
	// An empty object, or null keys, does not empty the registry.
	for _, empty := range []string{`{}`, `{"keys":null}`} {
		s.EditRegistry(func(string) string { return empty })
		if got := s.EncryptedStatus(&live, tk); got != http.StatusOK {
			t.Fatalf("the live key after %s: %d, want 200", empty, got)
		}
	}
}

// TestIdleBodiesHoldLittleMemory (hardening finding 6): 200 connections to
// the retrieve route (max_body 64KiB) each announce an encrypted body and
// send 780 bytes of it, either announcing 1.39 MB (what the review sent) or
// a length within the limit. The edge reserves memory by the route's
// limit, not the announced length, and reads in 16 KiB chunks: its live
// heap grows by less than 32 MiB (it grew by 227 MiB). The read timeouts of the reference
// Caddyfile then close the idle connections.
func TestIdleBodiesHoldLittleMemory(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStackEnv(t, nil, []string{"HDC_READ_BODY_IDLE=3s"})
	c := s.NewClient("clinic-idle")
	tk := s.Login(c, false, "")
	for _, announced := range []int{1_390_000, 60_000} {
		t.Run(fmt.Sprint("Content-Length ", announced), func(t *testing.T) {
			s.HoldIdleBodies(t, tk, announced, 200, 32<<20)
		})
	}
}

// dirSize returns the bytes of the regular files below dir, and the names
// of those whose name starts with prefix.
func dirSize(t *testing.T, dir, prefix string) (int64, []string) {
	t.Helper()
	var (
		size  int64
		named []string
	)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		size += fi.Size()
		if strings.HasPrefix(d.Name(), prefix) {
			named = append(named, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return size, named
}

// TestCrashLeavesNoPartialUploads (hardening finding 8): hdc-backend is
// killed with SIGKILL while a 20 MiB upload is half staged; when it starts
// again on the same data, the staged part is gone and the data directory
// is back to its size before the upload.
func TestCrashLeavesNoPartialUploads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	client := hdctest.CreateWebhookClient(t, dir, "clinic-crash")
	b := hdctest.StartWebhookBackend(t, dir)
	before, _ := dirSize(t, dir, "put-")

	pr, pw := io.Pipe()
	go func() {
		req, _ := http.NewRequest("POST", b.Public+contract.PathUpload, pr)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(contract.HeaderClientID, client.ClientID)
		req.Header.Set(contract.HeaderWorkspaceID, client.WorkspaceID)
		hdctest.AsEdge(req)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	go func() {
		_, _ = io.WriteString(pw, `{"file":"`)
		enc := base64.NewEncoder(base64.StdEncoding, pw)
		chunk := testkit.RandomBytes(1 << 20)
		for range 10 { // half of 20 MiB, then the client stalls
			if _, err := enc.Write(chunk); err != nil {
				return
			}
		}
	}()
	testkit.Eventually(t, 30*time.Second, "10 MiB staged", func() bool {
		size, staged := dirSize(t, dir, "put-")
		return len(staged) == 1 && size-before >= 9<<20
	})
	b.Kill()
	pw.CloseWithError(errors.New("the test is done"))
	if _, staged := dirSize(t, dir, "put-"); len(staged) != 1 {
		t.Fatalf("after the crash: staged %v, want the half upload", staged)
	}

	hdctest.StartWebhookBackend(t, dir)
	after, staged := dirSize(t, dir, "put-")
	if len(staged) != 0 || after > before+1<<20 {
		t.Fatalf("after a restart: %d bytes (%d before the upload), staging files %v", after, before, staged)
	}
}

// TestContentLengthWithChunkedIsRefused (hardening finding 9): a request
// carrying both Content-Length and Transfer-Encoding: chunked is refused
// with a 400 problem and the connection closed, so bytes after its chunked
// body are never served as a second request (RFC 9112 §6.3): over plain
// HTTP, inside TLS, and after a request that asked to upgrade to h2c (which
// the edge answers over HTTP/1.1).
func TestContentLengthWithChunkedIsRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, raw string
	}{
		{"one request", "POST /connect-auth/v1/account/login HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\n" +
			"Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /.well-known/jwks.json HTTP/1.1\r\nHost: edge\r\n\r\n"},
		{"after a good request", "GET /.well-known/jwks.json HTTP/1.1\r\nHost: edge\r\n\r\n" +
			"POST /connect-auth/v1/account/login HTTP/1.1\r\nHost: edge\r\ntransfer-encoding: chunked\r\ncontent-length: 52\r\n\r\n" +
			"0\r\n\r\nGET /.well-known/jwks.json HTTP/1.1\r\nHost: edge\r\n\r\n"},
		{"after an upgrade to h2c, declined", "GET /.well-known/jwks.json HTTP/1.1\r\nHost: edge\r\n" +
			"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n" +
			"POST /connect-auth/v1/account/login HTTP/1.1\r\nHost: edge\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"0\r\n\r\nGET /.well-known/jwks.json HTTP/1.1\r\nHost: edge\r\n\r\n"},
	}
	for _, site := range []struct {
		name  string
		start func(*testing.T) *hdctest.Stack
	}{{"http", func(t *testing.T) *hdctest.Stack { return hdctest.StartStack(t) }}, {"https", hdctest.StartTLSStack}} {
		s := site.start(t)
		// The site's own host: the TLS site answers another 421.
		host := "Host: " + s.Edge[strings.Index(s.Edge, "://")+3:]
		for _, tt := range tests {
			t.Run(site.name+", "+tt.name, func(t *testing.T) {
				conn := s.DialEdge(t)
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(15 * time.Second))
				if _, err := io.WriteString(conn, strings.ReplaceAll(tt.raw, "Host: edge", host)); err != nil {
					t.Fatal(err)
				}
				wantRefusedLast(t, conn, strings.Count(tt.raw, "HTTP/1.1\r\n")-1)
			})
		}
	}
}

// wantRefusedLast reads the answers of conn until it closes: n answers, the
// last a 400 problem and the only one.
func wantRefusedLast(t *testing.T, conn net.Conn, n int) {
	t.Helper()
	br := bufio.NewReader(conn)
	var statuses []int
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("after %v: %v (the connection stayed open)", statuses, err)
			}
			break
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
		if resp.StatusCode == http.StatusBadRequest {
			testkit.WantProblem(t, resp.StatusCode, resp.Header, body, http.StatusBadRequest, "invalid_request")
		}
	}
	if len(statuses) == 0 || statuses[len(statuses)-1] != http.StatusBadRequest || slices.Contains(statuses[:len(statuses)-1], http.StatusBadRequest) {
		t.Fatalf("answers %v: want the smuggling request refused with 400, last", statuses)
	}
	if len(statuses) != n {
		t.Fatalf("answers %v: the bytes after the refused request were served", statuses)
	}
}
