package e2e

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// connectionSpellings name the edge's hop headers in a Connection field in
// every case and spacing a client may use, alone or among other options.
func connectionSpellings(names ...string) map[string][]string {
	lower := strings.ToLower(strings.Join(names, ","))
	return map[string][]string{
		"canonical":          {strings.Join(names, ", ")},
		"lower case":         {lower},
		"upper case":         {strings.ToUpper(strings.Join(names, ","))},
		"spaced, among more": {"keep-alive ,  " + strings.Join(names, " , ") + " ,close"},
		"one field each":     append([]string{"keep-alive"}, names...),
	}
}

// TestConnectionCannotRemoveTheEdgesHeaders (second review, finding 1): a
// client that names the edge's X-Hdc-* headers in Connection removes
// nothing the edge sets. On the compatibility refresh, a refresh token of
// client a sent under client b's key stays refused; an encrypted upload
// from 127.0.0.9 is recorded with that source, its kid and its request id.
func TestConnectionCannotRemoveTheEdgesHeaders(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	a, b := s.NewClient("hop-a"), s.NewClient("hop-b")
	tk := s.Login(a, false, "")
	refresh, _ := json.Marshal(map[string]string{"refresh_token": tk.RefreshToken})
	for name, fields := range connectionSpellings("X-Hdc-Key-Client-Id") {
		t.Run("refresh under another client's key, "+name, func(t *testing.T) {
			r := s.SendConnection(b, "POST", hdctest.RefreshCompatPath, refresh, nil, fields, "")
			hdctest.ExpectProblem(t, r, http.StatusUnauthorized, "invalid_refresh_token")
		})
	}
	file := []byte("an upload whose hop headers a client named")
	for name, fields := range connectionSpellings("X-Hdc-Client-Ip", "X-Hdc-Request-Id", "X-Hdc-Key-Id") {
		t.Run("upload from 127.0.0.9, "+name, func(t *testing.T) {
			before := len(s.StoredAudit(a.Workspace))
			r := s.SendConnection(a, "POST", hdctest.UploadPath, hdctest.JSONUpload(file), hdctest.Bearer(tk), fields, "127.0.0.9")
			if r.Status != http.StatusOK {
				t.Fatalf("upload: %s", r)
			}
			trail := s.StoredAudit(a.Workspace)
			if len(trail) != before+1 || trail[before].Action != audit.RecordUpload {
				t.Fatalf("the trail grew from %d to %d records, want one upload", before, len(trail))
			}
			e := trail[before].Event
			if e.Source != netip.MustParseAddr("127.0.0.9") || e.Kid != a.Kid || e.Request != r.Header.Get("X-Request-Id") {
				t.Fatalf("recorded source %s, kid %q, request %q; want 127.0.0.9, %s, %s",
					e.Source, e.Kid, e.Request, a.Kid, r.Header.Get("X-Request-Id"))
			}
		})
	}
}
