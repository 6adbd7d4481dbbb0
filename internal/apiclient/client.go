// Package apiclient calls the API as one client, as hdc call does: it logs
// in and keeps the token pair in a private cache file, refreshing it;
// encrypts requests and decrypts answers as the API's JWE envelopes when
// asked to, refusing an unencrypted success then; streams large bodies
// (files, standard input) rather than holding them in memory, with a
// progress bar on a terminal; and writes an answer to a file only once its
// envelope is verified.
package apiclient

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/privatefile"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// Client talks to the API as one client: it logs in, keeps the token
// pair in a private cache file, refreshes it, and encrypts and decrypts when
// asked to.
type Client struct {
	creds      Credentials
	sharingKey string
	encrypt    bool
	key        *jwe.CEK
	http       *http.Client
	cachePath  string
	tokens     tokenPair
	// Progress draws bars for large transfers; its zero value, the
	// default, none.
	Progress Progress
	// Header holds fields Do sends with each call beside its own (hdc
	// call -H); the logins and refreshes go without them. A field the
	// client sets itself (Authorization, the encryption's) overrides one
	// here.
	Header http.Header
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

// Response is an answer with its body decrypted when it was encrypted.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// Sealed: the answer was an envelope under the client's key, so it
	// comes from someone who holds the key.
	Sealed bool
}

// New returns a client with creds, logging in to the workspace sharingKey
// opens when it is not empty; with encrypt, it encrypts the requests
// under the credentials' key, which it then needs, and asks for encrypted
// answers. The token pair is cached per base URL, client and sharing key.
func New(creds Credentials, sharingKey string, encrypt bool) (*Client, error) {
	tlsConfig, err := creds.TLSConfig()
	if err != nil {
		return nil, err
	}
	c := &Client{creds: creds, sharingKey: sharingKey, encrypt: encrypt,
		http: &http.Client{Timeout: 10 * time.Minute, CheckRedirect: noRedirects,
			Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsConfig, ForceAttemptHTTP2: true}}}
	if encrypt {
		enc, err := creds.KeyEnc()
		if err != nil {
			return nil, fmt.Errorf("--encrypt: %w", err)
		}
		if c.key, err = jwe.NewKeyFor(enc, creds.EncryptionKey); err != nil {
			return nil, err
		}
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
func (c *Client) accessToken() (string, error) {
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

func (c *Client) login() error {
	body := map[string]string{"client_id": c.creds.ClientID, "client_secret": c.creds.ClientSecret}
	if c.sharingKey != "" {
		body["sharing_key"] = c.sharingKey
	}
	b, _ := json.Marshal(body)
	return c.obtain(contract.PathLogin, b, nil)
}

func (c *Client) refresh() error {
	b, _ := json.Marshal(map[string]string{"refresh_token": c.tokens.RefreshToken, "access_token": c.tokens.AccessToken})
	return c.obtain(contract.PathRefresh, b, http.Header{
		"Authorization": {"Bearer " + c.tokens.AccessToken}, "Client-Id": {c.creds.ClientID}})
}

// obtain posts to a token route and caches the pair it answers.
func (c *Client) obtain(path string, body []byte, header http.Header) error {
	resp, err := c.send("POST", path, nil, JSONBody(body), header)
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK {
		if note := c.Unauthenticated(resp); note != "" {
			return fmt.Errorf("%s: %s: %s", path, note, resp.Body)
		}
		return fmt.Errorf("%s: HTTP %d: %s", path, resp.Status, resp.Body)
	}
	var p tokenPair
	if err := json.Unmarshal(resp.Body, &p); err != nil || p.AccessToken == "" {
		return fmt.Errorf("%s: unexpected answer", path)
	}
	p.ObtainedAt = time.Now()
	c.tokens = p
	return c.saveTokens()
}

func (c *Client) saveTokens() error {
	if err := os.MkdirAll(filepath.Dir(c.cachePath), 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(c.tokens)
	return privatefile.Write(c.cachePath, b)
}

// do sends an authenticated request and returns the answer unread. When
// the edge says the token expired it retries once with a fresh token, if
// the body can be sent again (standard input cannot).
func (c *Client) Do(method, path string, query url.Values, b *Body) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		tok, err := c.accessToken()
		if err != nil {
			return nil, err
		}
		header := c.Header.Clone()
		if header == nil {
			header = http.Header{}
		}
		header.Set("Authorization", "Bearer "+tok)
		resp, err := c.roundTrip(method, path, query, b, header)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusUnauthorized && attempt == 0 && b.replayable() {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			c.tokens.ExpiresIn = 0 // refresh, or log in, and try once more
			continue
		}
		return resp, nil
	}
}

// send sends a request and reads its answer whole, decrypted.
func (c *Client) send(method, path string, query url.Values, b *Body, header http.Header) (*Response, error) {
	resp, err := c.roundTrip(method, path, query, b, header)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return c.ReadAnswer(method, path, resp)
}

// roundTrip builds the request, its body encrypted when asked and streamed
// when it is not in memory, sends it, and returns the answer unread.
func (c *Client) roundTrip(method, path string, query url.Values, b *Body, header http.Header) (*http.Response, error) {
	u := strings.TrimSuffix(c.creds.BaseURL, "/") + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	p := c.encode(b)
	if c.encrypt {
		req.Header.Set(contract.HeaderEncryption, contract.EncryptionJWE)
		if p.empty() {
			req.Header.Set(contract.HeaderEncryptionKid, c.creds.Kid)
		}
	}
	telemetry.InjectEnv(req.Header)
	finish := c.attach(req, p)
	resp, err := c.http.Do(req)
	// The writer's own failure (reading the file) says more than the
	// transport's; ErrClosedPipe only says the transport stopped reading.
	if werr := finish(); err != nil && werr != nil && !errors.Is(werr, io.ErrClosedPipe) {
		return nil, werr
	}
	return resp, err
}

// encode returns the request body carrying b as it goes on the wire:
// encrypted when asked, in memory when b is, streamed otherwise.
func (c *Client) encode(b *Body) payload {
	if !c.encrypt || b == nil {
		return plainPayload(b)
	}
	var p payload
	if b.upload {
		p = jsonUploadPayload(b.src) // the form an encrypted upload takes, not multipart
	} else {
		p = plainPayload(b)
	}
	// Every envelope names when it was made and a new id, so that the
	// gateway can refuse a stale or replayed one.
	fresh := jwe.Fresh(c.creds.Kid)
	if p.data == nil && c.key.Enc() != jwe.EncA128CBCHS256 { // sealed whole (jwe.ErrNotStreamed)
		var buf bytes.Buffer
		if err := p.write(&buf); err != nil {
			return payload{write: func(io.Writer) error { return err }, size: -1}
		}
		p.data = buf.Bytes()
	}
	if p.data != nil {
		data := jwe.EncryptRequest(c.key, fresh, p.data)
		return payload{contentType: "application/json", size: int64(len(data)), data: data}
	}
	size := int64(-1)
	if p.size >= 0 {
		size = jwe.RequestSize(fresh, jwe.Request, p.size)
	}
	plain := p.write
	return payload{contentType: "application/json", size: size, write: func(w io.Writer) error {
		ew, err := jwe.NewRequestWriter(w, c.key, fresh, jwe.Request)
		if err != nil {
			return err
		}
		if err := plain(ew); err != nil {
			return err
		}
		return ew.Close()
	}}
}

// attach makes p the body of req and returns what to call once the request
// is done: for a streamed body, it stops the writer feeding the request
// through a pipe and returns the writer's error.
func (c *Client) attach(req *http.Request, p payload) func() error {
	if p.empty() {
		return func() error { return nil }
	}
	req.Header.Set("Content-Type", p.contentType)
	req.ContentLength = p.size // -1: unknown, sent chunked
	if p.data != nil {
		req.Body = io.NopCloser(bytes.NewReader(p.data))
		return func() error { return nil }
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := p.write(pw)
		pw.CloseWithError(err)
		done <- err
	}()
	req.Body = c.Progress.readCloser(pr, p.size, "upload")
	return func() error {
		pr.Close()
		return <-done
	}
}

// ReadAnswer reads an answer whole and decrypts it when it is an envelope.
func (c *Client) ReadAnswer(method, path string, resp *http.Response) (*Response, error) {
	out, err := io.ReadAll(c.Progress.reader(resp.Body, resp.ContentLength, "download"))
	if err != nil {
		return nil, err
	}
	r := &Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
	if sealedAnswer(resp.Header) {
		if err := c.open(r); err != nil {
			return nil, err
		}
	} else if err := c.refusePlain(method, path, r.Status); err != nil {
		return nil, err
	}
	return r, nil
}

// sealedAnswer reports whether an answer says it is an envelope.
func sealedAnswer(h http.Header) bool {
	return strings.EqualFold(h.Get(contract.HeaderEncryption), contract.EncryptionJWE)
}

// refusePlain refuses an unencrypted success when encryption was asked for:
// it could come from anyone between here and the API.
func (c *Client) refusePlain(method, path string, status int) error {
	if !c.encrypt || status < 200 || status >= 300 {
		return nil
	}
	return fmt.Errorf("%s %s: refusing the answer (HTTP %d): it is not encrypted under key %s, "+
		"so nothing shows it comes from the API", method, path, status, c.creds.Kid)
}

// answerForm is the serialization an answer's media type names.
func answerForm(h http.Header) jwe.Form {
	if mt, _, _ := mime.ParseMediaType(h.Get("Content-Type")); mt == "application/jose" {
		return jwe.Compact
	}
	return jwe.Flattened
}

// errNoKey refuses an envelope when no key was given.
var errNoKey = errors.New("the answer is encrypted but no key was given (--encrypt)")

// open decrypts the envelope r carries, in the serialization its media
// type names.
func (c *Client) open(r *Response) error {
	if c.key == nil {
		return errNoKey
	}
	e, ct, err := jwe.Parse(r.Body, answerForm(r.Header))
	if err != nil {
		return fmt.Errorf("refusing the answer (HTTP %d): it is not a valid envelope: %w", r.Status, err)
	}
	if r.Body, err = e.Decrypt(c.key, ct); err != nil {
		return fmt.Errorf("refusing the answer (HTTP %d): it does not decrypt under key %s: %w", r.Status, c.creds.Kid, err)
	}
	r.Sealed = true
	return nil
}

// Unauthenticated returns, for an answer to an encrypted call that was not
// encrypted, a note saying nothing vouches for it; "" otherwise.
func (c *Client) Unauthenticated(r *Response) string {
	if !c.encrypt || r.Sealed {
		return ""
	}
	return fmt.Sprintf("unauthenticated answer: HTTP %d is not encrypted under key %s; nothing shows it comes from the API",
		r.Status, c.creds.Kid)
}

// noRedirects makes the client return a redirect as the answer: the API
// never redirects, and a token must not follow one.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
