package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/health-data-connect/hdc/caddymodule/jwe"
	"github.com/health-data-connect/hdc/caddymodule/jwe/cbchmac"
	"github.com/health-data-connect/hdc/internal/contract"
)

// apiClient talks to the API as one client: it logs in, keeps the token
// pair in a private cache file, refreshes it, and encrypts and decrypts when
// asked to.
type apiClient struct {
	creds      demoCredentials
	sharingKey string
	encrypt    bool
	key        *cbchmac.Key
	http       *http.Client
	cachePath  string
	tokens     tokenPair
}

// tokenPair is the login and refresh answer, with when it was obtained.
type tokenPair struct {
	AccessToken      string    `json:"access_token"`
	ExpiresIn        int64     `json:"expires_in"`
	RefreshToken     string    `json:"refresh_token"`
	RefreshExpiresIn int64     `json:"refresh_expires_in"`
	ObtainedAt       time.Time `json:"obtained_at"`
}

// margin is how long before expiry a token is treated as expired.
const margin = 30 * time.Second

func (p tokenPair) accessValid(now time.Time) bool {
	return p.AccessToken != "" && now.Before(p.ObtainedAt.Add(time.Duration(p.ExpiresIn)*time.Second-margin))
}

func (p tokenPair) refreshValid(now time.Time) bool {
	return p.RefreshToken != "" && now.Before(p.ObtainedAt.Add(time.Duration(p.RefreshExpiresIn)*time.Second-margin))
}

// apiResponse is an answer with its body decrypted when it was encrypted.
type apiResponse struct {
	status int
	header http.Header
	body   []byte
	// sealed: the answer was an envelope under the client's key, so it
	// comes from someone who holds the key.
	sealed bool
}

// problemCode returns the code of a problem+json answer, or "".
func (r *apiResponse) problemCode() string {
	var p struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(r.body, &p)
	return p.Code
}

func newAPIClient(creds demoCredentials, sharingKey string, encrypt bool) (*apiClient, error) {
	c := &apiClient{creds: creds, sharingKey: sharingKey, encrypt: encrypt,
		http: &http.Client{Timeout: 10 * time.Minute, CheckRedirect: noRedirects}}
	if encrypt {
		k, err := jwe.NewKey(creds.EncryptionKey)
		if err != nil || creds.Kid == "" {
			return nil, errors.New("--encrypt needs a kid and a 16-byte encryption key")
		}
		c.key = k
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	id := sha256.Sum256([]byte(creds.BaseURL + "\x00" + creds.ClientID + "\x00" + sharingKey))
	c.cachePath = filepath.Join(dir, "hdc", "tokens-"+hex.EncodeToString(id[:8])+".json")
	if b, err := os.ReadFile(c.cachePath); err == nil {
		_ = json.Unmarshal(b, &c.tokens) // a damaged cache only costs a login
	}
	return c, nil
}

// accessToken returns a valid access token, refreshing or logging in as needed.
func (c *apiClient) accessToken() (string, error) {
	now := time.Now()
	if c.tokens.accessValid(now) {
		return c.tokens.AccessToken, nil
	}
	if c.tokens.refreshValid(now) {
		if err := c.refresh(); err == nil {
			return c.tokens.AccessToken, nil
		}
	}
	if err := c.login(); err != nil {
		return "", err
	}
	return c.tokens.AccessToken, nil
}

func (c *apiClient) login() error {
	body := map[string]string{"client_id": c.creds.ClientID, "client_secret": c.creds.ClientSecret}
	if c.sharingKey != "" {
		body["sharing_key"] = c.sharingKey
	}
	b, _ := json.Marshal(body)
	return c.obtain(contract.PathLogin, b, nil)
}

func (c *apiClient) refresh() error {
	b, _ := json.Marshal(map[string]string{"refresh_token": c.tokens.RefreshToken, "access_token": c.tokens.AccessToken})
	return c.obtain(contract.PathRefresh, b, map[string]string{
		"Authorization": "Bearer " + c.tokens.AccessToken, "Client-Id": c.creds.ClientID})
}

// obtain posts to a token route and caches the pair it answers.
func (c *apiClient) obtain(path string, body []byte, header map[string]string) error {
	resp, err := c.send("POST", path, nil, jsonBody(body), header)
	if err != nil {
		return err
	}
	if resp.status != http.StatusOK {
		if note := c.unauthenticated(resp); note != "" {
			return fmt.Errorf("%s: %s: %s", path, note, resp.body)
		}
		return fmt.Errorf("%s: HTTP %d: %s", path, resp.status, resp.body)
	}
	var p tokenPair
	if err := json.Unmarshal(resp.body, &p); err != nil || p.AccessToken == "" {
		return fmt.Errorf("%s: unexpected answer", path)
	}
	p.ObtainedAt = time.Now()
	c.tokens = p
	return c.saveTokens()
}

func (c *apiClient) saveTokens() error {
	if err := os.MkdirAll(filepath.Dir(c.cachePath), 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(c.tokens)
	return writePrivate(c.cachePath, b)
}

// body is a request body: JSON, or a file to upload.
type body struct {
	json     []byte
	file     []byte
	fileName string
}

func jsonBody(b []byte) *body { return &body{json: b} }

// do sends an authenticated request, retrying once with a fresh token when
// the edge says the token expired.
func (c *apiClient) do(method, path string, query url.Values, b *body) (*apiResponse, error) {
	for attempt := 0; ; attempt++ {
		tok, err := c.accessToken()
		if err != nil {
			return nil, err
		}
		resp, err := c.send(method, path, query, b, map[string]string{"Authorization": "Bearer " + tok})
		if err != nil {
			return nil, err
		}
		if resp.status == http.StatusUnauthorized && attempt == 0 {
			c.tokens.ExpiresIn = 0 // refresh, or log in, and try once more
			continue
		}
		return resp, nil
	}
}

// send builds, encrypts when asked, sends, and decrypts the answer.
func (c *apiClient) send(method, path string, query url.Values, b *body, header map[string]string) (*apiResponse, error) {
	u := strings.TrimSuffix(c.creds.BaseURL, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	payload, contentType := c.encode(b)
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		return nil, err
	}
	if c.encrypt {
		req.Header.Set(contract.HeaderEncryption, contract.EncryptionJWE)
		if payload == nil {
			req.Header.Set(contract.HeaderEncryptionKid, c.creds.Kid)
		} else {
			payload, contentType = jwe.EncryptRequest(c.key, c.creds.Kid, payload), "application/json"
		}
	}
	if payload != nil {
		req.Body = io.NopCloser(bytes.NewReader(payload))
		req.ContentLength = int64(len(payload))
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	r := &apiResponse{status: resp.StatusCode, header: resp.Header, body: out}
	switch {
	case strings.EqualFold(resp.Header.Get(contract.HeaderEncryption), contract.EncryptionJWE):
		if err := c.open(r); err != nil {
			return nil, err
		}
	case c.encrypt && r.status >= 200 && r.status < 300:
		// Encryption was asked for: an unencrypted success could come from
		// anyone between here and the API.
		return nil, fmt.Errorf("%s %s: refusing the answer (HTTP %d): it is not encrypted under key %s, "+
			"so nothing shows it comes from the API", method, path, r.status, c.creds.Kid)
	}
	return r, nil
}

// encode returns the body of a request carrying b, before encryption, and
// its media type.
func (c *apiClient) encode(b *body) ([]byte, string) {
	switch {
	case b == nil:
		return nil, ""
	case b.file != nil && !c.encrypt:
		return multipartFile(b.fileName, b.file)
	case b.file != nil:
		payload := make([]byte, 0, base64.StdEncoding.EncodedLen(len(b.file))+16)
		payload = append(payload, `{"file":"`...)
		payload = base64.StdEncoding.AppendEncode(payload, b.file)
		return append(payload, `"}`...), "application/json"
	}
	return b.json, "application/json"
}

// open decrypts the envelope r carries, in the serialization its media
// type names.
func (c *apiClient) open(r *apiResponse) error {
	if c.key == nil {
		return errors.New("the answer is encrypted but no key was given (--encrypt)")
	}
	form := jwe.Flattened
	if mt, _, _ := mime.ParseMediaType(r.header.Get("Content-Type")); mt == "application/jose" {
		form = jwe.Compact
	}
	e, ct, err := jwe.Parse(r.body, form)
	if err != nil {
		return fmt.Errorf("refusing the answer (HTTP %d): it is not a valid envelope: %w", r.status, err)
	}
	if r.body, err = e.Decrypt(c.key, ct); err != nil {
		return fmt.Errorf("refusing the answer (HTTP %d): it does not decrypt under key %s: %w", r.status, c.creds.Kid, err)
	}
	r.sealed = true
	return nil
}

// unauthenticated returns, for an answer to an encrypted call that was not
// encrypted, a note saying nothing vouches for it; "" otherwise.
func (c *apiClient) unauthenticated(r *apiResponse) string {
	if !c.encrypt || r.sealed {
		return ""
	}
	return fmt.Sprintf("unauthenticated answer: HTTP %d is not encrypted under key %s; nothing shows it comes from the API",
		r.status, c.creds.Kid)
}

// noRedirects makes the client return a redirect as the answer: the API
// never redirects, and a token must not follow one.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// multipartFile encodes one file as the form part "file".
func multipartFile(name string, content []byte) ([]byte, string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	part, _ := w.CreateFormFile("file", name)
	_, _ = part.Write(content)
	_ = w.Close()
	return buf.Bytes(), w.FormDataContentType()
}
