package edge

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/hopclient"
)

// fakeBackend answers every request with status, its name, the path and
// the body it read, and counts them.
type fakeBackend struct {
	*httptest.Server
	hits atomic.Int32
}

func newFakeBackend(t *testing.T, name string, status int) *fakeBackend {
	b := &fakeBackend{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(status)
		fmt.Fprint(w, name+" "+r.URL.Path+string(body))
	}))
	t.Cleanup(b.Close)
	return b
}

// downURL is the URL of a backend that does not answer: its listener
// closes every connection unanswered, and is held until the test ends, so
// that no server of a test running beside it takes its port (as one could
// take a port closed at once).
func downURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestFailover: the edge's client of the backends asks the one that
// answered last, and the next when one does not answer or answers 5xx.
func TestFailover(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		statuses []int // each backend's answer; 0: it does not answer (downURL)
		want     string
		wantErr  string
		// then is the answer of a second request: the backend that
		// answered is asked first.
		then string
	}{
		{name: "the first answers", statuses: []int{200, 200}, want: "b0 /x", then: "b0 /x"},
		{name: "the first is down", statuses: []int{0, 200}, want: "b1 /x", then: "b1 /x"},
		{name: "the first answers 5xx", statuses: []int{503, 200}, want: "b1 /x", then: "b1 /x"},
		{name: "a 4xx is an answer", statuses: []int{404, 200}, want: "b0 /x", then: "b0 /x"},
		{name: "two of three down", statuses: []int{0, 500, 200}, want: "b2 /x", then: "b2 /x"},
		{name: "all down", statuses: []int{0, 502}, wantErr: "answered 502"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var urls []string
			for i, status := range tt.statuses {
				if status == 0 {
					urls = append(urls, downURL(t))
					continue
				}
				urls = append(urls, newFakeBackend(t, fmt.Sprintf("b%d", i), status).URL)
			}
			url, client, err := (&HopTLS{}).backends(caddy.NewReplacer(), "keys", urls, "/x")
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range []string{tt.want, tt.then} {
				got, err := getBody(client, url)
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("request %d: %q, %v; want an error with %q", i, got, err, tt.wantErr)
					}
					return
				}
				if err != nil || got != want {
					t.Fatalf("request %d: %q, %v; want %q", i, got, err, want)
				}
			}
		})
	}
}

// TestFailoverResendsTheBody: a report, which the key plane's client
// marks repeatable, that the first backend answers 5xx reaches the next
// whole.
func TestFailoverResendsTheBody(t *testing.T) {
	t.Parallel()
	first, next := newFakeBackend(t, "b0", http.StatusServiceUnavailable), newFakeBackend(t, "b1", http.StatusOK)
	url, client, err := (&HopTLS{}).backends(caddy.NewReplacer(), "keys", []string{first.URL, next.URL}, "/x")
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(hopclient.Repeatable(t.Context()), http.MethodPost, url, strings.NewReader(` {"uses":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got, _ := io.ReadAll(resp.Body); string(got) != `b1 /x {"uses":[]}` || first.hits.Load() != 1 {
		t.Fatalf("answered %q after %d attempts at the first", got, first.hits.Load())
	}
}

func getBody(c *http.Client, url string) (string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestNewFailoverRefusesBadURLs(t *testing.T) {
	t.Parallel()
	for _, urls := range [][]string{nil, {"127.0.0.1:9081"}, {"https://"}, {"https://a:1", "%zz"}} {
		if _, _, err := (&HopTLS{}).backends(caddy.NewReplacer(), "keys", urls, ""); err == nil || !strings.HasPrefix(err.Error(), "hdc: keys: ") {
			t.Errorf("%q: %v; want a refusal naming the block", urls, err)
		}
	}
}

func TestBackendURLs(t *testing.T) {
	t.Setenv("HDC_TEST_BACKENDS", " https://a:1  https://b:2 ")
	got := backendURLs(caddy.NewReplacer(), []string{"{env.HDC_TEST_BACKENDS}", "https://c:3", "{env.HDC_TEST_NONE}"})
	if want := []string{"https://a:1", "https://b:2", "https://c:3"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("backendURLs = %q, want %q", got, want)
	}
}

// TestTokensFromBackends: the JWKS is read from the backends' internal
// listeners, from the next when one is down; the sources exclude each other.
func TestTokensFromBackends(t *testing.T) {
	t.Parallel()
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	jwks := fmt.Sprintf(`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k1","alg":"EdDSA","use":"sig","x":%q}]}`,
		base64.RawURLEncoding.EncodeToString(pub))
	var paths atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths.Store(r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, jwks)
	}))
	t.Cleanup(up.Close)
	repl, log := caddy.NewReplacer(), zap.NewNop()

	c := TokensConfig{JWKSBackends: []string{downURL(t), up.URL}}
	src, err := c.keySource(repl, log)
	if err != nil {
		t.Fatal(err)
	}
	key, err := src.Key(t.Context(), "k1")
	if err != nil || !pub.Equal(key) {
		t.Fatalf("Key = %v, %v; want the key the second backend serves", key, err)
	}
	if got := paths.Load(); got != contract.PathJWKS {
		t.Fatalf("the JWKS was read at %v, want %s", got, contract.PathJWKS)
	}

	for _, tt := range []struct {
		name string
		c    TokensConfig
		want string // "" for no source and no error
	}{
		{"none", TokensConfig{}, ""},
		{"url and backends", TokensConfig{JWKSURL: up.URL, JWKSBackends: []string{up.URL}}, "exclude each other"},
		{"file and backends", TokensConfig{JWKSFile: "/j.json", JWKSBackends: []string{up.URL}}, "exclude each other"},
		{"url and file", TokensConfig{JWKSURL: up.URL, JWKSFile: "/j.json"}, "exclude each other"},
		{"a backend without a scheme", TokensConfig{JWKSBackends: []string{"127.0.0.1:9081"}}, "not a backend's URL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src, err := tt.c.keySource(repl, log)
			switch {
			case tt.want == "" && (err != nil || src != nil):
				t.Fatalf("keySource = %v, %v; want none", src, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("keySource error %v, want %q", err, tt.want)
			}
		})
	}
}
