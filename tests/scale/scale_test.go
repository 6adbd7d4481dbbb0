package scale

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/sealed"
	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/backend/store/postgres"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestScaleOut runs two edges and two backends on one PostgreSQL database
// and one S3-compatible blob store, each edge in front of both backends,
// and checks that the replicas behave as one service: tokens, records,
// refresh-token reuse detection, login throttling and key rotation hold
// across them, and 1,000 events fanned out to two subscribers while one
// backend is killed with SIGKILL are all delivered, no delivery ever being
// attempted by both replicas at once.
func TestScaleOut(t *testing.T) {
	c := startCluster(t)
	a, b := c.edges[0], c.edges[1]
	client := c.ops.NewClient("scale")

	t.Run("TokenFromOneEdgeWorksOnTheOther", func(t *testing.T) {
		tk := a.Login(client, false, "")
		if r := b.Do("GET", hdctest.SubsPath, nil, hdctest.Bearer(tk)); r.Status != http.StatusOK {
			t.Fatalf("edge 2 refused edge 1's token: %s", r)
		}
		tk = b.Login(client, true, "")
		if r := a.Do("GET", hdctest.SubsPath, nil, hdctest.Bearer(tk)); r.Status != http.StatusOK {
			t.Fatalf("edge 1 refused edge 2's token: %s", r)
		}
	})

	t.Run("RecordUploadedThroughOneRetrievedThroughTheOther", func(t *testing.T) {
		file := make([]byte, 300<<10)
		_, _ = rand.Read(file)
		id := a.Upload(client, a.Login(client, false, ""), false, file, "?task=smart")
		b.Retrieve(client, b.Login(client, false, ""), true, id, file)
		// The file is in the shared bucket, and in neither backend's
		// directory.
		sum := sha256.Sum256(file)
		key := hex.EncodeToString(sum[:])
		head, err := c.s3.HeadObject(t.Context(), &s3.HeadObjectInput{
			Bucket: aws.String(scaleBucket), Key: aws.String("records/" + key[:2] + "/" + key)})
		if err != nil || aws.ToInt64(head.ContentLength) != int64(len(file)) {
			t.Fatalf("the upload is not in the shared bucket: %v", err)
		}
		for _, r := range c.backends {
			if _, err := os.Stat(r.data + "/blobs"); !os.IsNotExist(err) {
				t.Fatalf("a backend keeps blobs locally: %v", err)
			}
		}
	})

	t.Run("RefreshRotatedThroughOneEdgeIsReuseThroughTheOther", func(t *testing.T) {
		first := a.Login(client, false, "")
		refresh := func(e *hdctest.Stack, tk hdctest.Tokens, rt string) *hdctest.Response {
			h := hdctest.Bearer(tk)
			h["Client-Id"], h["Content-Type"] = client.ID, hdctest.JSONType
			return e.Do("POST", hdctest.RefreshPath, []byte(`{"refresh_token":"`+rt+`"}`), h)
		}
		r := refresh(a, first, first.RefreshToken)
		var second hdctest.Tokens
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &second) != nil {
			t.Fatalf("refresh through edge 1: %s", r)
		}
		before := c.metricSum("hdc_backend_refresh_token_reuse_total")
		hdctest.ExpectProblem(t, refresh(b, second, first.RefreshToken), http.StatusUnauthorized, "invalid_refresh_token")
		if after := c.metricSum("hdc_backend_refresh_token_reuse_total"); after != before+1 {
			t.Fatalf("the backends counted %d reuses, want %d", after, before+1)
		}
		// The reuse revoked the family: the token edge 1 issued is dead too.
		hdctest.ExpectProblem(t, refresh(b, second, second.RefreshToken), http.StatusUnauthorized, "invalid_refresh_token")
		hdctest.ExpectProblem(t, refresh(a, second, second.RefreshToken), http.StatusUnauthorized, "invalid_refresh_token")
	})

	t.Run("KeyRotatedInTheKeyPlaneReachesEveryEdge", func(t *testing.T) {
		var k struct{ Kid, Secret string }
		c.ops.HDC(&k, "keys", "rotate", "--client", client.ID)
		rotated := *client
		rotated.Kid, rotated.Key = k.Kid, k.Secret
		start := time.Now()
		for i, e := range c.edges {
			testkit.Eventually(t, 10*time.Second, fmt.Sprintf("edge %d to accept the new key", i+1), func() bool {
				r := e.Do("POST", hdctest.LoginPath, hdctest.JoseEncrypt(t, &rotated, hdctest.LoginBody(client)), map[string]string{
					"Content-Type": hdctest.JSONType, hdctest.JWEHeader: "JWE"})
				return r.Status == http.StatusOK
			})
		}
		accepted := time.Since(start)
		c.ops.HDC(nil, "keys", "retire", "--kid", client.Kid)
		start = time.Now()
		for i, e := range c.edges {
			testkit.Eventually(t, 10*time.Second, fmt.Sprintf("edge %d to refuse the retired key", i+1), func() bool {
				r := e.Do("POST", hdctest.LoginPath, hdctest.JoseEncrypt(t, client, hdctest.LoginBody(client)), map[string]string{
					"Content-Type": hdctest.JSONType, hdctest.JWEHeader: "JWE"})
				return r.Status == http.StatusBadRequest
			})
		}
		t.Logf("both edges accepted the new key %v after the rotation and refused the retired one %v after the retirement (through the key plane's change feed)",
			accepted.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
		client.Kid, client.Key = rotated.Kid, rotated.Key
	})

	t.Run("KeyRotationUnderLoadThroughBothEdges", func(t *testing.T) {
		hdctest.RotateUnderLoad(t, c.ops, c.edges[:], client, a.Login(client, false, ""))
	})

	t.Run("ReplayThroughTheOtherEdgeIsRefused", func(t *testing.T) {
		hdctest.FreshRequests(t, c.ops, a, b)
	})

	t.Run("LoginThrottlingHoldsAcrossReplicas", func(t *testing.T) {
		victim := c.ops.NewClient("scale")
		wrong := []byte(`{"client_id":"` + victim.ID + `","client_secret":"not-the-secret"}`)
		h := map[string]string{"Content-Type": hdctest.JSONType}
		// The default allows 10 failures per client in 5 minutes; spread
		// them over both replicas.
		for i := range 10 {
			hdctest.ExpectProblem(t, c.edges[i%2].Do("POST", hdctest.LoginPath, wrong, h), http.StatusUnauthorized, "invalid_client")
		}
		for i, e := range c.edges {
			r := e.Do("POST", hdctest.LoginPath, wrong, h)
			hdctest.ExpectProblem(t, r, http.StatusTooManyRequests, "too_many_attempts")
			if r.Header.Get("Retry-After") == "" {
				t.Fatalf("edge %d: 429 without Retry-After", i+1)
			}
		}
	})

	t.Run("WebhooksSurviveAReplicaKilled", func(t *testing.T) {
		testScaleWebhooks(t, c, client)
	})

	t.Run("SurvivorServesEverything", func(t *testing.T) {
		tk := b.Login(client, false, "")
		file := []byte("uploaded after the crash")
		id := b.Upload(client, tk, false, file, "")
		b.Retrieve(client, tk, false, id, file)
	})

	t.Run("NoSecretInTheClear", func(t *testing.T) {
		gcm := c.ops.NewClientEnc("scale-gcm", hdctest.EncGCM)
		raw, _ := base64.RawURLEncoding.DecodeString(gcm.Key)
		c.noSecretInTheClear(t, map[string][]byte{
			"the client's encryption key": []byte(client.Key), "the client's secret": []byte(client.Secret),
			"an A256GCM key, as its JWK's k": []byte(gcm.Key), "an A256GCM key's bytes": raw,
			"the webhook signing key": []byte(scaleWebhookKey),
		})
	})
}

// openSealed opens the cluster's database as the backends do, its
// secrets opened with the cluster's keeper (the KMS).
func (c *cluster) openSealed(t *testing.T) *sealed.Store {
	t.Helper()
	plain, err := postgres.Open(t.Context(), c.database)
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.Seal(t.Context(), plain, c.ops.Keeper, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// noSecretInTheClear searches every live row of the cluster's PostgreSQL
// database (the clients' keys among them) and every file of its
// operators' directory for secrets, and for the signing keys' seeds and
// the hash key the backends made, which it opens with the cluster's
// keeper (the KMS).
func (c *cluster) noSecretInTheClear(t *testing.T, secrets map[string][]byte) {
	st := c.openSealed(t)
	defer st.Close()
	keys, err := st.ListSigningKeys(t.Context())
	if err != nil || len(keys) == 0 {
		t.Fatalf("the signing keys: %v, %d", err, len(keys))
	}
	for _, k := range keys {
		secrets["the token signing key "+k.ID] = k.Seed
	}
	if secrets["the key of the client secrets' hash"], err = st.HashKey(t.Context(), "client-secrets", make([]byte, 32), time.Now()); err != nil {
		t.Fatal(err)
	}
	db, err := pgx.Connect(t.Context(), c.database)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	rows, err := db.Query(t.Context(), `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) < 10 {
		t.Fatalf("the tables: %v %v", tables, err)
	}
	var dump strings.Builder
	for _, table := range tables {
		rows, err := db.Query(t.Context(), `SELECT row_to_json(t)::text FROM `+pgx.Identifier{table}.Sanitize()+` t`)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			dump.WriteString(l + "\n")
		}
	}
	for what, secret := range secrets {
		for _, form := range hdctest.SecretForms(secret) {
			if strings.Contains(dump.String(), string(form)) {
				t.Errorf("%s is in the clear in a live row of the database", what)
			}
		}
		if found := hdctest.FindInFiles(t, c.ops.Dir, secret); len(found) > 0 {
			t.Errorf("%s is in the clear in %v", what, found)
		}
	}
}

// scaleWebhookKey is the signing key of the scale test's subscriptions.
const scaleWebhookKey = "scale-test-signing-key-0123456789"

// testScaleWebhooks fans 1,000 events out to two subscriptions, publishing
// on both backends, and kills backend 1 while both replicas have requests
// in flight.
func testScaleWebhooks(t *testing.T, c *cluster, client *hdctest.APIClient) {
	const (
		events = 1000
		key    = scaleWebhookKey
	)
	rc := newTimedReceiver(t, key, 2*time.Millisecond)
	tk := c.edges[0].Login(client, false, "")
	for i, path := range []string{"/a", "/b"} {
		r := c.edges[i].Do("POST", hdctest.SubsPath, []byte(`{"endpoint":"`+rc.url+path+`","signing_key":"`+key+`"}`),
			map[string]string{hdctest.Authorization: "Bearer " + tk.AccessToken, "Content-Type": hdctest.JSONType})
		if r.Status != http.StatusOK {
			t.Fatalf("subscribe %s: %s", path, r)
		}
	}

	// Hold the first deliveries until every event is published, so that
	// the kill comes with most deliveries still to make.
	rc.Hold()
	c.ops.HDC(nil, "tls", "issue", "--role", "publisher", "--dir", c.ops.Hop)
	publisher := c.ops.InternalClient(pki.Publisher)
	started := time.Now()
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			for n := int(next.Add(1) - 1); n < events; n = int(next.Add(1) - 1) {
				body := fmt.Sprintf(`{"type":%q,"workspace_id":%q,"data":{"n":%d}}`,
					webhook.Events[n%len(webhook.Events)], client.Workspace, n)
				resp, err := publisher.Post(c.backends[n%2].internal+contract.PathEvents, hdctest.JSONType, strings.NewReader(body))
				if err != nil {
					t.Errorf("publish %d: %v", n, err)
					return
				}
				var pub webhook.Published
				err = json.NewDecoder(resp.Body).Decode(&pub)
				resp.Body.Close()
				if resp.StatusCode != http.StatusAccepted || err != nil || pub.Deliveries != 2 {
					t.Errorf("publish %d: %d, %+v", n, resp.StatusCode, pub)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	published := time.Since(started)
	rc.Release()

	distinct := func() int {
		seen := map[string]bool{}
		for _, d := range rc.Deliveries() {
			seen[d.Header.Get("webhook-id")] = true
		}
		return len(seen)
	}
	// Mid-run, hold the subscriber's answers until backend 1 has attempts
	// in flight (its gauge says so; both replicas share the workspace's
	// cap of attempts, so it may take a few holds), and kill it.
	testkit.Eventually(t, time.Minute, "a third of the deliveries", func() bool { return distinct() >= 2*events/3 })
	rc.Hold()
	testkit.Eventually(t, 20*time.Second, "attempts in flight from backend 1", func() bool {
		if c.metric(0, "hdc_backend_webhook_attempts_in_flight") > 0 {
			return true
		}
		rc.Release() // let the claims move on, then hold again
		time.Sleep(20 * time.Millisecond)
		rc.Hold()
		return false
	})
	// The gauge counts an attempt from its claim; wait until every attempt
	// in flight has reached the receiver, which holds it, so that the
	// redelivery after the kill is a duplicate the receiver sees.
	testkit.Eventually(t, 20*time.Second, "the attempts in flight at the receiver", func() bool {
		a, b := c.metric(0, "hdc_backend_webhook_attempts_in_flight"), c.metric(1, "hdc_backend_webhook_attempts_in_flight")
		return a > 0 && b >= 0 && rc.InFlight.Load() >= int64(a+b)
	})
	held, before := rc.InFlight.Load(), distinct()
	c.kill(0)
	killed := time.Now()
	rc.Release()

	// Backend 1's claims come back when their leases (3 s) expire.
	testkit.Eventually(t, time.Minute, "every delivery", func() bool {
		return distinct() == 2*events && c.metric(1, "hdc_backend_webhook_queue_depth") == 0
	})
	recovered := time.Since(killed)

	// Each event reached both subscriptions, signed, with one webhook-id
	// per delivery, and no webhook-id was ever in two requests at once.
	got := map[string]map[int]string{} // path → event → webhook-id
	duplicates := 0
	for _, d := range rc.Deliveries() {
		if d.VerifyErr != nil {
			t.Fatalf("a delivery does not verify: %v", d.VerifyErr)
		}
		var p struct{ Data struct{ N *int } }
		if err := json.Unmarshal(d.Body, &p); err != nil || p.Data.N == nil {
			t.Fatalf("payload %s: %v", d.Body, err)
		}
		if got[d.Path] == nil {
			got[d.Path] = map[int]string{}
		}
		id := d.Header.Get("webhook-id")
		switch prev, seen := got[d.Path][*p.Data.N]; {
		case !seen:
			got[d.Path][*p.Data.N] = id
		case prev != id:
			t.Fatalf("event %d reached %s with webhook-ids %s and %s", *p.Data.N, d.Path, prev, id)
		default:
			duplicates++
		}
	}
	for _, path := range []string{"/a", "/b"} {
		if n := len(got[path]); n != events {
			t.Fatalf("%s received %d of the %d events", path, n, events)
		}
	}
	if duplicates == 0 {
		t.Fatal("no delivery was made twice: backend 1 had nothing in flight when it was killed")
	}
	if n := rc.overlaps(); n != 0 {
		t.Fatalf("%d times a delivery was attempted while another attempt of it was in progress", n)
	}
	t.Logf("%d events × 2 subscriptions published in %v on both backends; backend 1 SIGKILLed with %d of %d deliveries received and %d requests in flight; all delivered %v later; %d deliveries in all, %d duplicates (same webhook-id), 0 overlapping attempts",
		events, published.Round(time.Millisecond), before, 2*events, held, recovered.Round(time.Millisecond),
		len(rc.Deliveries()), duplicates)
}
