package interop

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestOfficialSDKLogin: the official Python SDK's login (a test double
// sending exactly its requests, tests/interop/ekasdk_login.py) logs in
// through the edge, with api_key, its name for the sharing key, or
// without, and refreshes as the SDK does; a login naming user_token, of
// the original API, is refused naming its replacement.
func TestOfficialSDKLogin(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	a, b := s.NewClient("sdk-a"), s.NewClient("sdk-b")
	var grant struct {
		SharingKey string `json:"sharing_key"`
	}
	s.HDC(&grant, "sharing", "grant", "--workspace", b.Workspace, "--client", a.ID)
	for _, tt := range []struct {
		name      string
		apiKey    []string
		workspace string
	}{
		{"with api_key", []string{grant.SharingKey}, b.Workspace},
		{"without", nil, a.Workspace},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{filepath.Join(hdctest.RepoRoot, "tests", "interop", "ekasdk_login.py"), s.Edge, a.ID, a.Secret}, tt.apiKey...)
			out, err := hdctest.RunProgram(t, nil, "/usr/bin/python3", args...)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Login, Refresh struct {
					Status int
					Body   hdctest.Tokens
				}
			}
			if err := json.Unmarshal(out, &got); err != nil || got.Login.Status != 200 || got.Refresh.Status != 200 {
				t.Fatalf("the SDK's login and refresh: %s", out)
			}
			s.Creds.Add("an access token", got.Login.Body.AccessToken, got.Refresh.Body.AccessToken)
			var claims struct {
				contract.TokenClaims
				jwt.RegisteredClaims
			}
			if _, _, err := jwt.NewParser().ParseUnverified(got.Refresh.Body.AccessToken, &claims); err != nil || claims.Workspace != tt.workspace {
				t.Fatalf("the refreshed token acts in %q (%v), want %q", claims.Workspace, err, tt.workspace)
			}
		})
	}
	body, _ := json.Marshal(map[string]string{"client_id": a.ID, "client_secret": a.Secret, "user_token": "an old user token"})
	r := s.Send(a, false, "POST", hdctest.LoginPath, body, nil)
	hdctest.ExpectProblem(t, r, 400, "invalid_request")
	if detail, _ := r.JSON(t)["detail"].(string); !strings.Contains(detail, "user_token") || !strings.Contains(detail, "sharing_key") {
		t.Fatalf("the refusal of user_token: %q", detail)
	}
}
