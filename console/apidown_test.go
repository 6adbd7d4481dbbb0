package console

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/admin/adminclient"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// goneAPI answers who is signed in, then lists clients through the Admin
// API's real client over backends that refuse connections.
type goneAPI struct {
	*cannedAPI
	gone *adminclient.Client
}

func (a goneAPI) ListClients(ctx context.Context, q adminapi.ClientQuery) (adminapi.Page[adminapi.Client], error) {
	return a.gone.ListClients(ctx, q)
}

// refusing returns a client of the Admin API over two addresses where
// nothing listens, and their URLs.
func refusing(t *testing.T) (*adminclient.Client, []string) {
	t.Helper()
	urls := []string{"https://" + testkit.FreeAddr(t), "https://" + testkit.FreeAddr(t)}
	c, err := adminclient.New(urls, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, urls
}

// TestAPIDown: when no backend answers, a page says so within 3 s,
// naming each backend tried and what it did, and still says who is
// signed in.
func TestAPIDown(t *testing.T) {
	t.Parallel()
	gone, urls := refusing(t)
	b := serve(t, goneAPI{newCannedAPI(), gone}).signIn()
	start := time.Now()
	status, body := b.get("/clients")
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the page took %v, want at most 3 s", took)
	}
	if status != http.StatusBadGateway {
		t.Fatalf("status %d, want 502", status)
	}
	for _, want := range []string{`Signed in as <strong id="me">alice@example.org</strong>`, "The Admin API did not answer",
		urls[0] + ": connection refused", urls[1] + ": connection refused"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page does not say %q:\n%s", want, body)
		}
	}
}

// TestRunChecksTheAPI: the console does not start when no backend of the
// Admin API answers, and says which it tried.
func TestRunChecksTheAPI(t *testing.T) {
	t.Parallel()
	gone, urls := refusing(t)
	var out bytes.Buffer
	start := time.Now()
	err := Run(t.Context(), Config{Listen: "127.0.0.1:0", API: gone, Out: &out})
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Run took %v to give up, want at most 3 s", took)
	}
	if err == nil || !strings.Contains(err.Error(), "the console could not reach the Admin API") ||
		!strings.Contains(err.Error(), urls[0]) || !strings.Contains(err.Error(), urls[1]) {
		t.Fatalf("Run: %v", err)
	}
	if out.Len() != 0 {
		t.Fatalf("Run printed %q before giving up", out.String())
	}
}
