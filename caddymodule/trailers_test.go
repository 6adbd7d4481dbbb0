package caddymodule

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/caddymodule/edge/edgetest"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
)

// TestTrailersDoNotCrossTheHop (third review, finding 4): a client's
// request trailers, of any name, the edge's own included, never reach the
// backend, nor their announcement, over HTTP/1.1 chunked and HTTP/2, plain
// and encrypted: the hop carries the allow-list's headers alone.
func TestTrailersDoNotCrossTheHop(t *testing.T) {
	e := startEdge(t, edgetest.Keys, nil)
	c1 := e.token("c1", nil)
	h2c := &http.Client{Transport: &http.Transport{Protocols: new(http.Protocols)}}
	h2c.Transport.(*http.Transport).Protocols.SetUnencryptedHTTP2(true)
	plain := []byte(`{"endpoint":"https://hooks.example.org/t"}`)
	envelope := jwe.EncryptRequest(edgetest.Key(t, edgetest.SecretOf("k-c1")), jwe.Protected{Kid: "k-c1"}, plain)
	for _, proto := range []struct {
		name   string
		client *http.Client
	}{{"HTTP/1.1 chunked", e.client}, {"HTTP/2", h2c}} {
		for _, body := range []struct {
			name   string
			data   []byte
			header map[string]string
		}{{"plain", plain, map[string]string{"Content-Type": "application/json"}}, {"encrypted", envelope, encHeaders(c1)}} {
			t.Run(proto.name+", "+body.name, func(t *testing.T) {
				req, err := http.NewRequest("POST", e.base+subscriptions, io.MultiReader(bytes.NewReader(body.data)))
				if err != nil {
					t.Fatal(err)
				}
				req.ContentLength = -1 // chunked over HTTP/1.1, so that trailers may follow
				req.Header.Set("Authorization", "Bearer "+c1)
				for k, v := range body.header {
					req.Header.Set(k, v)
				}
				// "!" is in no base64url text, so an encrypted answer cannot hold
				// the marker by chance.
				req.Trailer = http.Header{contract.HeaderClientID: {"evil!"}, "X-Planted-Trailer": {"evil!"}}
				before := e.up.count()
				resp, err := proto.client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || e.up.count() != before+1 {
					t.Fatalf("%d %s; the backend saw %d requests", resp.StatusCode, out, e.up.count()-before)
				}
				hit := e.up.last()
				if len(hit.trailer) != 0 || hit.header.Get("Trailer") != "" {
					t.Fatalf("the backend got the trailers %v, announced as %q", hit.trailer, hit.header.Get("Trailer"))
				}
				if got := hit.header.Get(contract.HeaderClientID); got != "c1" || strings.Contains(string(out), "evil!") {
					t.Fatalf("the backend saw client %q; answered %s", got, out)
				}
			})
		}
	}
}
