package scale

import (
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// freshCostEnv turns TestFreshnessCost on: a measurement, not a check.
const freshCostEnv = "HDC_FRESH_COST"

// TestFreshnessCost measures what the replay check adds to a request of
// 1 KiB, logging the figures docs/performance.md gives:
//
//	HDC_FRESH_COST=1 HDC_TEST_POSTGRES_URL=… go test -run TestFreshnessCost -v ./tests/scale/
//
// The same client's key (A128CBC-HS256, checked whenever an envelope names
// iat and jti) sends requests alternately with and without iat and jti,
// so that the only difference is the check: the edge's, and the backend's
// insert of the jti. Every route that takes an envelope writes to the
// database anyway (an upload its record, a login its refresh token); a
// request without a body has no envelope to check. One stack on SQLite,
// then the cluster on PostgreSQL; then the bytes a remembered jti takes in
// PostgreSQL.
func TestFreshnessCost(t *testing.T) {
	if os.Getenv(freshCostEnv) == "" {
		t.Skipf("set %s=1 to measure the replay check's cost", freshCostEnv)
	}
	t.Run("SQLite", func(t *testing.T) {
		s := hdctest.StartStack(t)
		logFreshCost(t, s, s.NewClient("fresh-cost"))
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		c := startCluster(t)
		logFreshCost(t, c.edges[0], c.ops.NewClient("fresh-cost"))
		logRowCost(t, c.database)
	})
}

// logFreshCost logs the times of 500 uploads of 1 KiB and of 500 logins,
// each with and without iat and jti, alternating.
func logFreshCost(t *testing.T, e *hdctest.Stack, c *hdctest.APIClient) {
	tk := e.Login(c, false, "")
	key, err := jwe.NewKey(c.Key)
	if err != nil {
		t.Fatal(err)
	}
	for _, route := range []struct {
		name, path string
		body       []byte
	}{{"upload of 1 KiB", hdctest.UploadPath, hdctest.JSONUpload(testkit.RandomBytes(1 << 10))}, {"login", hdctest.LoginPath, hdctest.LoginBody(c)}} {
		var plain, fresh []time.Duration
		for i := range 1000 {
			p := jwe.Protected{Kid: c.Kid}
			if i%2 == 1 {
				p.Iat, p.Jti = time.Now().Unix(), hdctest.NewJTI()
			}
			env := jwe.EncryptRequest(key, p, route.body)
			start := time.Now()
			r := e.Do("POST", route.path, env, map[string]string{hdctest.Authorization: "Bearer " + tk.AccessToken,
				hdctest.JWEHeader: "JWE", "Content-Type": hdctest.JSONType})
			d := time.Since(start)
			if r.Status != http.StatusOK {
				t.Fatalf("%s: %s", route.name, r)
			}
			if i%2 == 1 {
				fresh = append(fresh, d)
			} else {
				plain = append(plain, d)
			}
		}
		t.Logf("%s: without iat and jti %s; with them %s", route.name, quantiles(plain), quantiles(fresh))
	}
}

// logRowCost logs the bytes PostgreSQL takes per remembered jti (table and
// index), from 100,000 inserted as the backend inserts them.
func logRowCost(t *testing.T, database string) {
	conn, err := pgx.Connect(t.Context(), database)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	size := func() int64 {
		var n int64
		if err := conn.QueryRow(t.Context(), `SELECT pg_total_relation_size('request_ids')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := size()
	const n = 100_000
	if _, err := conn.Exec(t.Context(), `INSERT INTO request_ids (kid, jti, expires_at)
		SELECT 'k_abcdefghijklmnop', substr(md5(g::text), 1, 22), now() + interval '5 minutes' FROM generate_series(1, $1) AS g`, n); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL: %d bytes per remembered jti (kid of 18 characters, jti of 22), table and indexes", (size()-before)/n)
	if _, err := conn.Exec(t.Context(), `DELETE FROM request_ids WHERE kid = 'k_abcdefghijklmnop'`); err != nil {
		t.Fatal(err)
	}
}
