package auth_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/health-data-connect/hdc/backend/auth"
	"github.com/health-data-connect/hdc/internal/contract"
)

// TestLoginOlderNames: api_key, sharing_key's older name, logs in to the
// grant's workspace as sharing_key does, alone or beside an equal
// sharing_key; the two differing, an empty one, or user_token are
// refused, naming what to send.
func TestLoginOlderNames(t *testing.T) {
	f := newFixture(t)
	a, g := f.grant(t)
	creds := fmt.Sprintf(`"client_id":%q,"client_secret":%q`, a.ClientID, a.ClientSecret)
	for _, tt := range []struct {
		name, members string
		workspace     string // of the token, "" when refused
		detail        string // in the refusal
	}{
		{"api_key", fmt.Sprintf(`,"api_key":%q`, g.SharingKey), "wb", ""},
		{"api_key and an equal sharing_key", fmt.Sprintf(`,"api_key":%q,"sharing_key":%q`, g.SharingKey, g.SharingKey), "wb", ""},
		{"neither", "", "wa", ""},
		{"api_key null", `,"api_key":null`, "wa", ""},
		{"api_key and another sharing_key", fmt.Sprintf(`,"api_key":%q,"sharing_key":"other"`, g.SharingKey), "", "sharing_key and api_key"},
		{"an empty api_key", `,"api_key":""`, "", "must not be empty"},
		{"user_token", `,"user_token":"t"`, "", "sharing_key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := f.post(t, http.HandlerFunc(f.handler.Login), "{"+creds+tt.members+"}")
			if tt.workspace == "" {
				if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), tt.detail) {
					t.Fatalf("%d %s; want 400 naming %q", w.Code, w.Body, tt.detail)
				}
				return
			}
			var pair auth.TokenPair
			if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &pair) != nil {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			var claims struct {
				contract.TokenClaims
				jwt.RegisteredClaims
			}
			if _, _, err := jwt.NewParser().ParseUnverified(pair.AccessToken, &claims); err != nil || claims.Workspace != tt.workspace {
				t.Fatalf("a token of workspace %q (%v), want %q", claims.Workspace, err, tt.workspace)
			}
		})
	}
}
