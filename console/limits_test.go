package console

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/contract"
)

// TestClientLimitsShown: a client's page shows its overrides of the
// edges' limits as the Admin API gives them, and says when it has none.
func TestClientLimitsShown(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.consoles[bob].signIn()
	a := s.consoles[alice].signIn()
	var clients []string
	for range 2 {
		created := a.follow(a.submit("/clients", url.Values{"workspace": {"acme"}}))
		clients = append(clients, find(t, created.body, `id="new-client" href="/clients/([^"]+)"`))
	}
	l := contract.Limits{Rates: map[contract.RouteClass]contract.Rate{contract.ClassWrites: {PerSecond: 100, Burst: 20}, contract.ClassReads: {}},
		UploadBytesPerDay: 10 << 20}
	e := audit.Event{At: time.Now(), Action: audit.ClientLimitsSet, Outcome: audit.Success, Workspace: "acme",
		Entity: audit.Entity{Kind: audit.EntityClient, ID: clients[0]}}
	if err := s.st.SetClientLimits(t.Context(), clients[0], l, e); err != nil {
		t.Fatal(err)
	}
	_, body := b.get("/clients/" + clients[0])
	for _, want := range []string{"<td>writes</td><td>100</td><td>20</td>", `<td>reads</td><td colspan="2">no limit</td>`, "10485760 bytes"} {
		if !strings.Contains(body, want) {
			t.Fatalf("the client's page lacks %s:\n%s", want, body)
		}
	}
	if _, body := b.get("/clients/" + clients[1]); !strings.Contains(body, "No override: the edges' defaults apply.") {
		t.Fatalf("a client without overrides:\n%s", body)
	}
}
