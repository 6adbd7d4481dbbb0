package tests

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/audit"
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
	s := startStack(t)
	a, b := s.newClient("hop-a"), s.newClient("hop-b")
	tk := s.login(a, false, "")
	refresh, _ := json.Marshal(map[string]string{"refresh_token": tk.RefreshToken})
	for name, fields := range connectionSpellings("X-Hdc-Key-Client-Id") {
		t.Run("refresh under another client's key, "+name, func(t *testing.T) {
			r := s.sendConnection(b, "POST", refreshCompatPath, refresh, nil, fields, "")
			expectProblem(t, r, http.StatusUnauthorized, "invalid_refresh_token")
		})
	}
	file := []byte("an upload whose hop headers a client named")
	for name, fields := range connectionSpellings("X-Hdc-Client-Ip", "X-Hdc-Request-Id", "X-Hdc-Key-Id") {
		t.Run("upload from 127.0.0.9, "+name, func(t *testing.T) {
			before := len(s.storedAudit(a.Workspace))
			r := s.sendConnection(a, "POST", uploadPath, jsonUpload(file), bearer(tk), fields, "127.0.0.9")
			if r.status != http.StatusOK {
				t.Fatalf("upload: %s", r)
			}
			trail := s.storedAudit(a.Workspace)
			if len(trail) != before+1 || trail[before].Action != audit.RecordUpload {
				t.Fatalf("the trail grew from %d to %d records, want one upload", before, len(trail))
			}
			e := trail[before].Event
			if e.Source != netip.MustParseAddr("127.0.0.9") || e.Kid != a.Kid || e.Request != r.header.Get("X-Request-Id") {
				t.Fatalf("recorded source %s, kid %q, request %q; want 127.0.0.9, %s, %s",
					e.Source, e.Kid, e.Request, a.Kid, r.header.Get("X-Request-Id"))
			}
		})
	}
}

// sendConnection sends an encrypted request as c (npm jose seals it and
// opens the answer) over a connection of its own from the loopback
// address from (any, if empty), with these Connection fields.
func (s *stack) sendConnection(c *apiClient, method, path string, body []byte, header map[string]string, connection []string, from string) *response {
	s.t.Helper()
	req, err := http.NewRequest(method, s.edge+path, bytes.NewReader(joseEncrypt(s.t, c, body)))
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", jsonType)
	req.Header.Set(jweHeader, "JWE")
	req.Header["Connection"] = connection
	if from == "" {
		from = "127.0.0.1"
	}
	resp, err := s.checked(fromAddr(from)).Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer bytes.Buffer
	if _, err := answer.ReadFrom(resp.Body); err != nil {
		s.t.Fatal(err)
	}
	r := &response{status: resp.StatusCode, header: resp.Header, body: answer.Bytes()}
	if resp.Header.Get(jweHeader) == "JWE" {
		r.body, r.sealed = npmJose.decrypt(s.t, c, formJSON, r.body), true
	}
	return r
}
