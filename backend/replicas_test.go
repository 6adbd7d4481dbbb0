package backend

import (
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/auth"
	"github.com/health-data-connect/hdc/backend/store/postgres/pgtest"
	"github.com/health-data-connect/hdc/internal/contract"
)

// TestReplicasOnPostgres runs two servers on one PostgreSQL database, as
// two replicas: a token one issues verifies against the other's JWKS, a
// refresh token rotated by one is reuse at the other, and failed logins
// spread over both count against one limit.
func TestReplicasOnPostgres(t *testing.T) {
	database := pgtest.URL(t)
	replica := func() *harness {
		return start(t, func(c *Config) {
			c.DatabaseURL = database
			c.LoginFailuresPerClient = 3
			c.LoginFailureWindow = time.Hour
		})
	}
	a, b := replica(), replica()
	c := a.client("w")

	pair := a.login(c, "")
	if cl := b.verify(pair.AccessToken, false); cl.Subject != c.ClientID {
		t.Fatalf("claims verified by the other replica = %+v", cl)
	}
	refresh := func(h *harness, p auth.TokenPair, token string) response {
		return h.postJSON(contract.PathRefresh, map[string]string{"refresh_token": token}, append(h.as(p), "Client-Id", c.ClientID)...)
	}
	res := refresh(a, pair, pair.RefreshToken)
	if res.StatusCode != 200 {
		t.Fatalf("refresh: %d %s", res.StatusCode, res.body)
	}
	var next auth.TokenPair
	res.json(t, &next)
	wantProblem(t, refresh(b, next, pair.RefreshToken), 401, "invalid_refresh_token")
	wantProblem(t, refresh(a, next, next.RefreshToken), 401, "invalid_refresh_token")

	fail := func(h *harness) response {
		return h.postJSON(contract.PathLogin, map[string]string{"client_id": c.ClientID, "client_secret": "hdc_cs_wrong"})
	}
	for _, h := range []*harness{a, b, a} {
		wantProblem(t, fail(h), 401, "invalid_client")
	}
	for _, h := range []*harness{b, a} {
		wantProblem(t, fail(h), 429, "too_many_attempts")
	}
}
