package console

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit/trail"
)

// TestVerifyBeforeTheFirstCheckpoint: with no checkpoint in the backends'
// bucket yet, the verification page shows the trails the API verified
// and says that they were not held to a checkpoint, never an error.
func TestVerifyBeforeTheFirstCheckpoint(t *testing.T) {
	t.Parallel()
	s := newStackWith(t, trail.Config{Checkpoints: "file://" + t.TempDir()})
	if _, err := s.st.EnsureWorkspace(t.Context(), "w1", time.Now()); err != nil {
		t.Fatal(err)
	}
	status, body := s.consoles[bob].signIn().get("/audit/verify")
	for _, want := range []string{`<span class="bad">Not held to a checkpoint</span>: no checkpoint in file:///`, `Every trail verifies.`} {
		if status != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("/audit/verify: %d, without %q:\n%s", status, want, body)
		}
	}
}
