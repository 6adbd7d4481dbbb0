package console

import (
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// TestFleetSaysWhenSilentOnesLeave: the fleet page says of a silent
// backend and a silent edge when they leave the list (the Admin API's
// leaves_at), and of current ones nothing.
func TestFleetSaysWhenSilentOnesLeave(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	now := time.Now()
	for _, b := range []store.FleetBackend{
		{ID: "b-silent", Host: "h1", Version: "v1", Address: "10.0.0.1:9081", StartedAt: now.Add(-time.Hour), LastSeen: now.Add(-10 * time.Minute)},
		{ID: "b-ready", Host: "h2", Version: "v1", Address: "10.0.0.2:9081", StartedAt: now.Add(-time.Hour), LastSeen: now},
	} {
		if err := s.st.BeatBackend(t.Context(), b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.st.ReportEdge(t.Context(), store.FleetEdge{ID: "e-silent", Name: "edge-1", LastContact: now.Add(-20 * time.Minute), Source: "10.0.1.1"}, nil); err != nil {
		t.Fatal(err)
	}
	status, body := s.consoles[alice].signIn().get("/fleet")
	if status != http.StatusOK {
		t.Fatalf("/fleet: %d %s", status, body)
	}
	for _, want := range []string{
		`<span class="bad">silent</span>, leaves the list (49|50) minutes from now</td>`,
		`<span class="bad">\(silent\)</span>, leaves the list (39|40) minutes from now</td>`,
	} {
		if !regexp.MustCompile(want).MatchString(body) {
			t.Errorf("the fleet page does not say %s:\n%s", want, body)
		}
	}
	if n := len(regexp.MustCompile(`leaves the list`).FindAllString(body, -1)); n != 2 {
		t.Errorf("the fleet page says %d times when a process leaves the list, want 2 (the silent ones)", n)
	}
}
