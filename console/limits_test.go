package console

import (
	"html"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/contract"
)

// newClient creates a client of workspace through b's console and returns
// its id.
func newClient(t *testing.T, b *browser, workspace string) string {
	t.Helper()
	created := b.follow(b.submit("/clients", url.Values{"workspace": {workspace}}))
	return find(t, created.body, `id="new-client" href="/clients/([^"]+)"`)
}

// TestClientLimitsShown: a client's page shows each class's rate as the
// Admin API gives it (an override, no limit, or the edges' default), and
// its daily quota.
func TestClientLimitsShown(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.consoles[bob].signIn()
	a := s.consoles[alice].signIn()
	clients := []string{newClient(t, a, "acme"), newClient(t, a, "acme")}
	l := contract.Limits{Rates: map[contract.RouteClass]contract.Rate{contract.ClassWrites: {PerSecond: 100, Burst: 20}, contract.ClassReads: {}},
		UploadBytesPerDay: 10 << 20}
	e := audit.Event{At: time.Now(), Action: audit.ClientLimitsSet, Outcome: audit.Success, Workspace: "acme",
		Entity: audit.Entity{Kind: audit.EntityClient, ID: clients[0]}}
	if err := s.st.SetClientLimits(t.Context(), clients[0], l, e); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		client string
		want   []string
	}{
		{clients[0], []string{`data-class="writes"><td>writes</td><td class="rate">100 a second, burst 20<`, `data-class="reads"><td>reads</td><td class="rate">no limit<`,
			`data-class="login"><td>login</td><td class="rate">the edges&#39; default<`, "10485760 bytes"}},
		{clients[1], []string{`data-class="writes"><td>writes</td><td class="rate">the edges&#39; default<`, "Daily upload quota: the edges' default"}},
	} {
		_, body := b.get("/clients/" + tc.client)
		for _, want := range tc.want {
			if !strings.Contains(body, want) {
				t.Fatalf("%s's page lacks %s:\n%s", tc.client, want, body)
			}
		}
	}
}

// TestLimitsSetAndClear: alice sets a client's limits with its page's
// form, in place of any it had, then clears them from a confirmation that
// names each; the API holds what the form said, and the audit search says
// both changes; what she typed wrong, and what the API refuses, is a 4xx
// problem page that changes nothing; the auditor's form is refused.
func TestLimitsSetAndClear(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	a := s.consoles[alice].signIn()
	client := newClient(t, a, "acme")
	path := "/clients/" + client
	form := func(fields ...string) url.Values {
		f := url.Values{}
		for i := 0; i+1 < len(fields); i += 2 {
			f.Set(fields[i], fields[i+1])
		}
		return f
	}
	for _, tc := range []struct {
		name   string
		form   url.Values
		status int
	}{
		{"a rate that is no number", form("rate_writes_per_second", "fast", "rate_writes_burst", "20"), 400},
		{"a rate without its burst", form("rate_writes_per_second", "100"), 400},
		{"a rate the API refuses", form("rate_writes_per_second", "-1", "rate_writes_burst", "20"), 400},
		{"a quota that is no number", form("upload_bytes_per_day", "ten megabytes"), 400},
		{"a negative quota", form("upload_bytes_per_day", "-5"), 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := a.submit(path+"/limits", tc.form); got.status != tc.status || !strings.Contains(got.body, `id="detail"`) {
				t.Fatalf("%d, want %d and a problem page:\n%s", got.status, tc.status, got.body)
			}
		})
	}
	if got := s.consoles[bob].signIn().submit(path+"/limits", form("upload_bytes_per_day", "5")); got.status != http.StatusForbidden {
		t.Fatalf("the auditor's limits: %d", got.status)
	}
	if got := a.submit(path+"/limits", form("rate_writes_per_second", "100", "rate_writes_burst", "20", "rate_reads_per_second", "0",
		"rate_reads_burst", "0", "rate_login_per_second", "", "upload_bytes_per_day", "1048576")); got.status != http.StatusSeeOther || got.location != path {
		t.Fatalf("set: %d to %q", got.status, got.location)
	}
	want := contract.Limits{Rates: map[contract.RouteClass]contract.Rate{contract.ClassWrites: {PerSecond: 100, Burst: 20}, contract.ClassReads: {}},
		UploadBytesPerDay: 1 << 20}
	if got, _, err := s.st.ClientLimits(t.Context(), client); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("the client's limits: %+v, %v; want %+v", got, err, want)
	}
	_, body := a.get(path + "/confirm?action=clear-limits")
	for _, w := range []string{"100 a second, burst 20", "no limit", "1048576 bytes", `action="` + path + `/limits/clear"`} {
		if !strings.Contains(body, w) {
			t.Fatalf("the clearing's confirmation lacks %s:\n%s", w, body)
		}
	}
	if got := a.post(path+"/limits/clear", formOf(t, body, path+"/limits/clear")); got.status != http.StatusSeeOther || got.location != path {
		t.Fatalf("clear: %d to %q", got.status, got.location)
	}
	if got, set, err := s.st.ClientLimits(t.Context(), client); err != nil || set {
		t.Fatalf("the client's limits after the clearing: %+v (set %v), %v", got, set, err)
	}
	if status, body := a.get(path + "/confirm?action=clear-limits"); status != http.StatusBadRequest || !strings.Contains(body, "no override") {
		t.Fatalf("clearing no limits: %d\n%s", status, body)
	}
	_, body = a.get("/audit?entity=" + client)
	for _, w := range []string{alice + " set the limits of the client " + client, alice + " cleared the limits of the client " + client} {
		if !strings.Contains(html.UnescapeString(body), w) {
			t.Errorf("the audit search lacks %q", w)
		}
	}
}
