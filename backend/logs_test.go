package backend

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/auth"
	"github.com/health-data-connect/hdc/internal/contract"
)

// TestLogsHoldNoSecrets sends secrets where ids belong, and wrong secrets
// where secrets belong, through failed logins, failed refreshes and
// requests the hop's TLS refuses: no log line may carry a secret (hdc_cs_,
// hdc_rt_, hdc_sk_ values) or a submitted client_secret, and no answer may
// quote one either.
func TestLogsHoldNoSecrets(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	h := startLogged(t, zap.New(core), withHop(t))
	a := h.client("wa")
	h.client("wb")
	g, err := h.srv.Identity().GrantSharing(context.Background(), audittest.Operator, "wb", a.ClientID)
	if err != nil {
		t.Fatal(err)
	}
	const wrongSecret = "correct-horse-battery-staple" // a secret without our prefix
	secrets := []string{a.ClientSecret, g.SharingKey, wrongSecret}
	var refusals [][]byte
	send := func(method, path, body string, headers ...string) response {
		t.Helper()
		headers = append([]string{"Content-Type", "application/json"}, headers...)
		res := h.do(method, h.public+path, strings.NewReader(body), headers...)
		if res.StatusCode >= 400 {
			refusals = append(refusals, res.body)
		}
		return res
	}
	login := func(body string) response { return send("POST", contract.PathLogin, body) }

	// Failed logins: a secret as the client id, a wrong secret, a wrong
	// sharing key, a secret as a member name.
	login(fmt.Sprintf(`{"client_id":%q,"client_secret":%q}`, a.ClientSecret, a.ClientSecret))
	login(fmt.Sprintf(`{"client_id":%q,"client_secret":%q}`, g.SharingKey, wrongSecret))
	login(fmt.Sprintf(`{"client_id":%q,"client_secret":%q}`, a.ClientID, wrongSecret))
	login(fmt.Sprintf(`{"client_id":%q,"client_secret":%q,"sharing_key":%q}`, a.ClientID, a.ClientSecret, "hdc_sk_"+wrongSecret))
	login(fmt.Sprintf(`{"client_id":%q,"client_secret":%q,"sharing_key":%q}`, a.ClientSecret, wrongSecret, g.SharingKey))
	login(fmt.Sprintf(`{%q:1}`, a.ClientSecret))

	// Failed refreshes.
	var pair auth.TokenPair
	res := login(fmt.Sprintf(`{"client_id":%q,"client_secret":%q}`, a.ClientID, a.ClientSecret))
	res.json(t, &pair)
	secrets = append(secrets, pair.RefreshToken, pair.AccessToken)
	as := h.as(pair)
	refresh := func(body string, extra ...string) response {
		return send("POST", contract.PathRefresh, body, append(as, extra...)...)
	}
	refresh(fmt.Sprintf(`{"refresh_token":%q}`, "hdc_rt_"+wrongSecret), "Client-Id", a.ClientID)
	refresh(fmt.Sprintf(`{"refresh_token":%q}`, pair.RefreshToken), "Client-Id", a.ClientSecret)
	refresh(fmt.Sprintf(`{"refresh_token":%q,"access_token":%q}`, pair.RefreshToken, wrongSecret), "Client-Id", a.ClientID)
	refresh(fmt.Sprintf(`{"refresh_token":%q,%q:1}`, pair.RefreshToken, a.ClientSecret), "Client-Id", a.ClientID)
	// Reuse of a rotated token.
	if res := refresh(fmt.Sprintf(`{"refresh_token":%q}`, pair.RefreshToken), "Client-Id", a.ClientID); res.StatusCode != 200 {
		t.Fatalf("refresh: %d %s", res.StatusCode, res.body)
	}
	refresh(fmt.Sprintf(`{"refresh_token":%q}`, pair.RefreshToken), "Client-Id", a.ClientID)

	// Requests the hop's TLS refuses (no edge certificate), carrying
	// secrets in identity headers, and admitted ones carrying them where
	// the edge puts ids. (The key id is the name an operator gave a key in
	// the edge's registry, whatever its shape, so it is forged only where
	// the request is refused.)
	forged := []string{contract.HeaderClientID, a.ClientSecret, contract.HeaderWorkspaceID, "wa", contract.HeaderTokenID, pair.RefreshToken}
	kid := []string{contract.HeaderKeyID, g.SharingKey}
	stranger := hopClient(t, filepath.Dir(h.cfg.HopCA), "")
	req, _ := http.NewRequest("GET", h.public+contract.PathSubscriptions, nil)
	for i := 0; i+1 < len(forged)+len(kid); i += 2 {
		all := append(append([]string{}, forged...), kid...)
		req.Header.Add(all[i], all[i+1])
	}
	if resp, err := stranger.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("a request without the edge's certificate was served: %d", resp.StatusCode)
	}
	send("GET", contract.PathSubscriptions, "", forged...)
	send(strings.ToUpper(a.ClientSecret), contract.PathSubscriptions, "")

	if logs.Len() == 0 {
		t.Fatal("nothing was logged")
	}
	for _, e := range logs.All() {
		line := e.Message + " " + fmt.Sprint(e.ContextMap())
		if strings.Contains(strings.ToLower(line), "hdc_") {
			t.Errorf("log line carries an hdc_ value: %s", line)
		}
		for _, s := range secrets {
			if strings.Contains(line, s) || strings.Contains(strings.ToLower(line), strings.ToLower(s)) {
				t.Errorf("log line carries a secret: %s", line)
			}
		}
	}
	if len(refusals) < 10 {
		t.Fatalf("only %d requests were refused", len(refusals))
	}
	for _, body := range refusals {
		if bytes.Contains(bytes.ToLower(body), []byte("hdc_")) {
			t.Errorf("answer quotes an hdc_ value: %s", body)
		}
		for _, s := range secrets {
			if bytes.Contains(body, []byte(s)) {
				t.Errorf("answer quotes a secret: %s", body)
			}
		}
	}
}

// TestHealthChecksLogAtDebug: the edges ask every backend's /readyz every
// second; an answer of 200 to a health route is logged at debug, any
// other request, and a health route's refusal, at info.
func TestHealthChecksLogAtDebug(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	h := startLogged(t, zap.New(core), nil)
	for _, base := range []string{h.public, h.internal} {
		if res := h.do("GET", base+contract.PathReady, nil); res.StatusCode != 200 {
			t.Fatalf("%s%s: %d", base, contract.PathReady, res.StatusCode)
		}
	}
	h.do("GET", h.internal+contract.PathHealth, nil)
	h.do("GET", h.public+contract.PathHealth, nil) // no such route there: 404
	levels := map[string][]zapcore.Level{}
	for _, e := range logs.FilterMessage("request").All() {
		route, _ := e.ContextMap()["route"].(string)
		levels[route] = append(levels[route], e.Level)
	}
	for route, want := range map[string][]zapcore.Level{
		"GET " + contract.PathReady:  {zapcore.DebugLevel, zapcore.DebugLevel},
		"GET " + contract.PathHealth: {zapcore.DebugLevel},
		"/":                          {zapcore.InfoLevel},
	} {
		if !slices.Equal(levels[route], want) {
			t.Errorf("route %q logged at %v, want %v", route, levels[route], want)
		}
	}
}
