package clientcmd

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/health-data-connect/hdc/cmd/hdc/internal/clitest"
)

// lockedBuffer is an output the receiver and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestWebhooksListen(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, key string }{
		{"raw key", "a-signing-key-of-20+"},
		// The Standard Webhooks form: the signature is keyed with the
		// decoded bytes, as the backend and every library key it.
		{"whsec_ secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
	} {
		t.Run(tt.name, func(t *testing.T) { testWebhooksListen(t, tt.key) })
	}
}

func testWebhooksListen(t *testing.T, key string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := &lockedBuffer{}
	done := make(chan error, 1)
	go func() { done <- serveWebhooks(ctx, ln, key, out) }()

	signer, err := standardwebhooks.NewWebhook(key)
	if !strings.HasPrefix(key, "whsec_") {
		signer, err = standardwebhooks.NewWebhookRaw([]byte(key))
	}
	if err != nil {
		t.Fatal(err)
	}
	post := func(body string, tamper bool) int {
		ts := time.Now()
		sig, err := signer.Sign("msg_1", ts, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if tamper {
			body += " "
		}
		req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/hook", strings.NewReader(body))
		req.Header.Set("webhook-id", "msg_1")
		req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
		req.Header.Set("webhook-signature", sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	body := `{"type":"user.delete","timestamp":"2026-11-21T00:00:00Z","data":{"id":"u1"}}`
	if code := post(body, false); code != http.StatusNoContent {
		t.Fatalf("a well-signed delivery got %d", code)
	}
	if code := post(body, true); code != http.StatusUnauthorized {
		t.Fatalf("a tampered delivery got %d", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "signature verified") || !strings.Contains(got, `"user.delete"`) || !strings.Contains(got, "REJECTED") {
		t.Fatalf("output:\n%s", got)
	}
}

// TestWebhooksListenHelp: the help of hdc webhooks listen names what lets
// the backend deliver to its receiver, on this machine (hdc up's flag) and
// in a deployment (HDC_WEBHOOK_ALLOW_NETS for a receiver on loopback, an
// operator's grant for one on a private network).
func TestWebhooksListenHelp(t *testing.T) {
	t.Parallel()
	res := clitest.Run(t, nil, "webhooks", "listen", "--help")
	if res.Err != nil {
		t.Fatalf("webhooks listen --help: %v: %s", res.Err, res.Stderr)
	}
	for _, want := range []string{"--allow-loopback-webhooks", "HDC_WEBHOOK_ALLOW_NETS", "private network", "hdc subscriptions destinations grant"} {
		if !bytes.Contains(res.Stdout, []byte(want)) {
			t.Errorf("webhooks listen --help does not name %q:\n%s", want, res.Stdout)
		}
	}
}
