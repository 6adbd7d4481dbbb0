package console

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// TestWebhooksFailing: the webhooks page lists every subscription, or with
// Failing only (?failing=true) the one whose delivery failed, with since
// when; a failing of neither true nor false is a 400 problem.
func TestWebhooksFailing(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	failing, _ := failedDelivery(t, s.st)
	healthy := store.Subscription{ID: uuid.NewString(), WorkspaceID: "acme", Endpoint: "https://example.com/healthy", Protocol: "https",
		EventNames: []string{"user.delete"}, SigningKey: "whsec-0123456789abcdef", Status: store.SubscriptionActive, CreatedAt: time.Now()}
	if err := s.st.CreateSubscription(t.Context(), healthy, 0, audit.Event{At: healthy.CreatedAt, Action: audit.SubscriptionCreate,
		Outcome: audit.Success, Workspace: "acme", Entity: audit.Entity{Kind: audit.EntitySubscription, ID: healthy.ID}}); err != nil {
		t.Fatal(err)
	}
	a := s.consoles[alice].signIn()
	for path, want := range map[string][]string{"/webhooks": {failing, healthy.ID}, "/webhooks?failing=true": {failing}} {
		status, body := a.get(path)
		var got []string
		for _, m := range subscriptionRow.FindAllStringSubmatch(body, -1) {
			got = append(got, m[1])
			if since := m[2]; (since == "—") != (m[1] == healthy.ID) {
				t.Errorf("%s: %s failing since %q", path, m[1], since)
			}
		}
		if status != http.StatusOK || strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: %d, subscriptions %v, want %v", path, status, got, want)
		}
		if checked := strings.Contains(body, `value="true" checked`); checked != strings.Contains(path, "failing") {
			t.Errorf("%s: the Failing only box checked: %v", path, checked)
		}
	}
	if status, _ := a.get("/webhooks?failing=maybe"); status != http.StatusBadRequest {
		t.Errorf("failing=maybe: %d, want 400", status)
	}
}

// subscriptionRow is a row of the webhooks page: the subscription's id and
// since when it fails.
var subscriptionRow = regexp.MustCompile(`<tr data-subscription="([^"]+)">.*?<td class="failing-since">(.*?)</td></tr>`)
