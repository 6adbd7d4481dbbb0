package caddymodule

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	"github.com/health-data-connect/hdc/caddymodule/edge/edgetest"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/internal/testkit/fakeplane"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// liveEdge is the reference Caddyfile running in this process with the module,
// in front of a recording upstream and a JWKS server, all on loopback.
type liveEdge struct {
	base     string // http://127.0.0.1:port
	admin    string // the admin API, on an inherited socket
	metrics  string // the metrics listener
	registry string
	plane    *fakeplane.KeyPlane // the keys when HDC_KEY_REGISTRY is set empty
	up       *recorder
	signer   *testkit.Signer
	client   *http.Client
}

// recorder is the upstream: it remembers what reached it, hashing bodies
// instead of keeping them, and echoes the identity it was given.
type recorder struct {
	mu   sync.Mutex
	hits []recorded
}

type recorded struct {
	method, path  string
	header        http.Header
	trailer       http.Header // read after the body
	contentLength int64
	te            []string
	size          int64
	sha256        string
	body          []byte // the first 64 KiB
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := sha256.New()
	head := &limitedBuffer{max: 64 << 10}
	n, err := io.Copy(io.MultiWriter(h, head), r.Body)
	if err != nil {
		http.Error(w, "read: "+err.Error(), http.StatusBadRequest)
		return
	}
	rec.mu.Lock()
	rec.hits = append(rec.hits, recorded{r.Method, r.URL.Path, r.Header.Clone(), r.Trailer.Clone(), r.ContentLength,
		r.TransferEncoding, n, hex.EncodeToString(h.Sum(nil)), head.b})
	rec.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"path": r.URL.Path, "client": r.Header.Get(contract.HeaderClientID), "workspace": r.Header.Get(contract.HeaderWorkspaceID),
		"kid": r.Header.Get(contract.HeaderKeyID), "bytes": n, "sha256": hex.EncodeToString(h.Sum(nil)),
	})
}

// ready answers a health check as a ready backend does.
func ready(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"status":"ready"}`)
}

func (rec *recorder) count() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.hits)
}

func (rec *recorder) last() recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.hits[len(rec.hits)-1]
}

type limitedBuffer struct {
	b   []byte
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// hopServer serves h over the hop's mutual TLS, as the backend's
// listeners do, with the certificates of the authority in dir: a request
// reaches h only with a client certificate that names the edge.
func hopServer(t testing.TB, dir string, h http.Handler) *httptest.Server {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, pki.CertFile(pki.Backend)), filepath.Join(dir, pki.KeyFile(pki.Backend)))
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := os.ReadFile(filepath.Join(dir, pki.CAFile))
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !contract.FromEdge(r.TLS) {
			http.Error(w, "not the edge", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// startEdge loads ../Caddyfile with the environment pointing at test
// servers. Caddy is one per process: tests using it must not run in parallel.
func startEdge(t testing.TB, keys []registryfile.Entry, env map[string]string) *liveEdge {
	t.Helper()
	signer := testkit.NewSigner("sig-1")
	hop := filepath.Join(t.TempDir(), "tls")
	if err := pki.InitDir(hop, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	// The internal listener: the JWKS, and the key plane holding keys.
	plane := fakeplane.NewKeyPlane()
	for _, k := range keys {
		plane.Set(k.Kid, k.ClientID, k.Secret, k.Status)
	}
	internal := http.NewServeMux()
	internal.Handle("/", plane)
	internal.HandleFunc("GET "+contract.PathJWKS, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(testkit.JWKS(signer))
	})
	internal.HandleFunc("GET "+contract.PathReady, ready)
	jwks := hopServer(t, hop, internal)
	rec := &recorder{}
	// Both listeners answer the edge's active health checks, as a
	// backend's do; the recorder sees only the requests it proxies.
	public := http.NewServeMux()
	public.Handle("/", rec)
	public.HandleFunc("GET "+contract.PathReady, ready)
	upstream := hopServer(t, hop, public)

	registry := filepath.Join(t.TempDir(), "keys.json")
	if err := registryfile.Update(registry, edgetest.Sealer, func(f *registryfile.File) error {
		for _, k := range keys {
			k.CreatedAt = time.Now()
			f.Keys = append(f.Keys, k)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Caddy takes the listeners as inherited sockets ("fd/N"), so no port
	// is closed and reused.
	site, addr := testkit.ListenFile(t)
	adminSock, admin := testkit.ListenFile(t)
	metricsSock, metrics := testkit.ListenFile(t)
	vars := map[string]string{
		"HDC_SITE":             "http://",
		"HDC_BIND":             fmt.Sprintf("fd/%d", site.Fd()),
		"HDC_EDGE_ADMIN":       fmt.Sprintf("fd/%d", adminSock.Fd()),
		"HDC_METRICS_BIND":     fmt.Sprintf("fd/%d", metricsSock.Fd()),
		"HDC_KEY_REGISTRY":     registry,
		"HDC_KEEPER":           edgetest.KeeperURL,
		"HDC_BACKEND":          upstream.Listener.Addr().String(),
		"HDC_BACKEND_INTERNAL": jwks.URL,
		"HDC_HOP_CA":           filepath.Join(hop, pki.CAFile),
		"HDC_HOP_CERT":         filepath.Join(hop, pki.CertFile(pki.Edge)),
		"HDC_HOP_KEY":          filepath.Join(hop, pki.KeyFile(pki.Edge)),
	}
	for k, v := range env {
		vars[k] = v
	}
	for k, v := range vars {
		t.Setenv(k, v)
	}
	src, err := os.ReadFile("../Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	cfg, warnings, err := caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}.Adapt(src, map[string]any{"filename": "Caddyfile"})
	if err != nil {
		t.Fatalf("adapting the Caddyfile: %v", err)
	}
	for _, w := range warnings {
		t.Logf("Caddyfile warning: %s", w.String())
	}
	if err := caddy.Load(cfg, true); err != nil {
		t.Fatalf("loading the config: %v", err)
	}
	t.Cleanup(func() { _ = caddy.Stop() })

	e := &liveEdge{base: "http://" + addr, admin: "http://" + admin, metrics: "http://" + metrics, registry: registry, plane: plane, up: rec,
		signer: signer, client: &http.Client{Timeout: 2 * time.Minute}}
	// The server must really be up: an unknown route answers our 404 problem.
	resp, err := e.client.Get(e.base + "/no-such-route")
	if err != nil {
		t.Fatalf("the edge is not serving: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("the edge answered %d %s to an unknown route", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return e
}

// token mints an access token for client in workspace ws-<client>, with
// claims overridden or removed (a nil value removes the claim).
func (e *liveEdge) token(client string, override map[string]any) string {
	return e.signer.Token(testkit.With(testkit.Claims(client, "ws-"+client, "jti-"+client, time.Now()), override))
}

// metric reads a series (a name, with its labels if it has any) from the
// edge's metrics: 0 when it is not there yet.
func (e *liveEdge) metric(t testing.TB, series string) float64 {
	t.Helper()
	resp, err := e.client.Get(e.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(text), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %q", series, line)
			}
			return f
		}
	}
	return 0
}
