package caddymodule

import (
	"bytes"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/caddymodule/edge/edgetest"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestEdgeFreshRequests runs A256GCM and --require-fresh keys through the
// reference Caddyfile with the key plane: an envelope of another enc than
// its key's fails as a bad tag does, byte for byte; a fresh request is
// served with its jti handed to the backend; a stale, a replayed or a
// request without iat and jti is refused, and never reaches the backend.
func TestEdgeFreshRequests(t *testing.T) {
	e := startEdge(t, edgetest.Keys, map[string]string{"HDC_KEY_REGISTRY": ""})
	gcmSecret := jwe.NewGCMSecret()
	e.plane.SetKey(clientkey.Key{Kid: "k-gcm", ClientID: "c1", Secret: gcmSecret, Enc: jwe.EncA256GCM, Status: clientkey.Active})
	e.plane.SetKey(clientkey.Key{Kid: "k-strict", ClientID: "c1", Secret: "0123456789abcdef", Enc: jwe.EncA128CBCHS256,
		RequireFresh: true, Status: clientkey.Active})
	gcm, err := jwe.NewKeyFor(jwe.EncA256GCM, gcmSecret)
	if err != nil {
		t.Fatal(err)
	}
	c1 := e.token("c1", nil)
	// A new kid works once the change that added it has reached the edge
	// (until then its kid filter refuses it, and the change, arriving
	// after a first look-up, may drop the key that look-up cached): wait
	// until the edge has applied every change, then ask for an answer
	// encrypted under each kid, which needs no envelope, until it comes.
	last := float64(e.plane.Last())
	testkit.Eventually(t, 10*time.Second, "the edge to apply the key plane's changes", func() bool {
		return e.metric(t, "hdc_edge_key_feed_applied_sequence") >= last
	})
	for _, kid := range []string{"k-gcm", "k-strict"} {
		testkit.Eventually(t, 10*time.Second, "the edge to have "+kid, func() bool {
			resp, _ := e.call(t, "GET", subscriptions, nil, map[string]string{"Authorization": "Bearer " + c1, contract.HeaderEncryptionKid: kid})
			return resp.StatusCode == http.StatusOK
		})
	}
	send := func(key *jwe.CEK, p jwe.Protected) (int, []byte) {
		resp, body := e.call(t, "POST", subscriptions, jwe.EncryptRequest(key, p, []byte(`{"n":1}`)), encHeaders(c1))
		return resp.StatusCode, body
	}
	now := time.Now().Unix()
	fresh := jwe.Protected{Kid: "k-gcm", Iat: now, Jti: "gcm-request-0001"}
	resp, body := e.call(t, "POST", subscriptions, jwe.EncryptRequest(gcm, fresh, []byte(`{"n":1}`)), encHeaders(c1))
	if resp.StatusCode != 200 {
		t.Fatalf("a fresh A256GCM request: %d %s", resp.StatusCode, body)
	}
	answer, ct := edgetest.ParseAnswer(t, resp.Header, body)
	if pt, err := answer.Decrypt(gcm, ct); err != nil || answer.Header.Enc != jwe.EncA256GCM || !bytes.Contains(pt, []byte(`"kid":"k-gcm"`)) {
		t.Fatalf("the answer under the A256GCM key: %s, %v", pt, err)
	}
	hit := e.up.last()
	if hit.header.Get(contract.HeaderJTI) != fresh.Jti || hit.header.Get(contract.HeaderJTIExpires) != strconv.FormatInt(now+300, 10) {
		t.Fatalf("the backend got jti %q, expiring %q", hit.header.Get(contract.HeaderJTI), hit.header.Get(contract.HeaderJTIExpires))
	}
	hits := e.up.count()
	_, badTag := send(edgetest.Key(t, "zzzzzzzzzzzzzzzz"), jwe.Protected{Kid: "k-c1"})
	for _, tt := range []struct {
		name string
		key  *jwe.CEK
		p    jwe.Protected
		want string
	}{
		{"replayed", gcm, fresh, problem.CodeReplayedRequest},
		{"stale", gcm, jwe.Protected{Kid: "k-gcm", Iat: now - 600, Jti: "gcm-request-0002"}, problem.CodeStaleRequest},
		{"A256GCM without iat and jti", gcm, jwe.Protected{Kid: "k-gcm"}, problem.CodeFreshnessRequired},
		{"--require-fresh without iat and jti", edgetest.Key(t, "0123456789abcdef"), jwe.Protected{Kid: "k-strict"}, problem.CodeFreshnessRequired},
		{"A256GCM under an A128CBC-HS256 kid", gcm, jwe.Protected{Kid: "k-c1", Iat: now, Jti: "gcm-request-0003"}, ""},
		{"A128CBC-HS256 under an A256GCM kid", edgetest.Key(t, edgetest.SecretOf("k-c1")), jwe.Protected{Kid: "k-gcm", Iat: now, Jti: "gcm-request-0004"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := send(tt.key, tt.p)
			switch {
			case code != 400:
				t.Fatalf("status %d: %s", code, body)
			case tt.want == "" && !bytes.Equal(body, badTag):
				t.Fatalf("answer %s differs from a bad tag's %s", body, badTag)
			case tt.want == "":
				return
			}
			// The tag verified: the refusal is encrypted under the key.
			answer, ct, err := jwe.Parse(body, jwe.Flattened)
			var pt []byte
			if err == nil {
				pt, err = answer.Decrypt(tt.key, ct)
			}
			if err != nil || !bytes.Contains(pt, []byte(`"code":"`+tt.want+`"`)) {
				t.Fatalf("answer %s (%s, %v), want %s encrypted under the key", body, pt, err, tt.want)
			}
		})
	}
	if e.up.count() != hits {
		t.Fatalf("%d refused requests reached the backend", e.up.count()-hits)
	}
}
