package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

const (
	benchClient = "bench-client"
	benchKid    = "bench-key"
	benchSecret = "0123456789abcdef"
	benchGCMKid = "bench-gcm-key"
)

// Names of the edges the bench starts (startEdge).
const (
	plainEdge    = "caddy"             // plain Caddy
	registryEdge = "hdc-edge"          // hdc-edge with the registry file's keys
	planeEdge    = "hdc-edge-keyplane" // hdc-edge with the key plane's keys
	// The stages of the breakdown (--breakdown): the edge's Caddy route
	// without any hdc handler, and with hdc_auth alone. Both forward the
	// encrypted request as it is.
	handleEdge = "caddy-handle"
	authEdge   = "hdc-auth-only"
	// Plain Caddy and hdc-edge (the registry file's keys) with the hop
	// the reference Caddyfile makes: HTTP/2 with mutual TLS to the
	// upstream (--instructions).
	plainTLSEdge = "caddy-tls-hop"
	tlsEdge      = "hdc-edge-tls-hop"
)

// benchEnv is what every part of the bench shares: a temporary directory,
// the upstream, a signed token, the bench's two keys, a registry with the
// A128CBC-HS256 one and a key plane with both.
type benchEnv struct {
	dir      string
	upstream *http.Server
	upAddr   string
	upTLS    *http.Server // the same upstream on the hop's mutual TLS
	upTLSURL string
	token    string
	cbc      benchKey // A128CBC-HS256, in the registry and the key plane
	gcm      benchKey // A256GCM, in the key plane alone
	jwks     string
	registry string
	keeper   string // the keyfile:// URL of the registry's keeper
	hop      *benchHop
	plane    *keyPlane
	lastHash chan uploadSeen
}

// uploadSeen is what the upstream saw of an upload.
type uploadSeen struct {
	bytes  int64
	sha256 string
}

func newBenchEnv() (*benchEnv, error) {
	dir, err := os.MkdirTemp("", "hdc-bench-")
	if err != nil {
		return nil, err
	}
	e := &benchEnv{dir: dir, lastHash: make(chan uploadSeen, 1)}
	if err := e.writeKeys(); err != nil {
		e.close()
		return nil, err
	}
	if e.hop, err = newBenchHop(filepath.Join(dir, "tls")); err != nil {
		e.close()
		return nil, err
	}
	if e.plane, err = startKeyPlane(e.hop, e.cbc, e.gcm); err != nil {
		e.close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.close()
		return nil, err
	}
	e.upAddr = ln.Addr().String()
	e.upstream = &http.Server{Handler: http.HandlerFunc(e.serveUpstream), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = e.upstream.Serve(ln) }()
	if e.upTLS, e.upTLSURL, err = e.hop.serve(http.HandlerFunc(e.serveUpstream)); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

// serveUpstream is the trivial JSON upstream: it reads the body and answers
// a small JSON object. Uploads are hashed, to check what came through.
func (e *benchEnv) serveUpstream(w http.ResponseWriter, r *http.Request) {
	h := sha256.New()
	var n int64
	var err error
	if r.URL.Path == uploadPath {
		n, err = io.Copy(h, r.Body)
	} else {
		n, err = io.Copy(io.Discard, r.Body)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.URL.Path == uploadPath {
		select {
		case e.lastHash <- uploadSeen{n, hex.EncodeToString(h.Sum(nil))}:
		default:
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(upstreamAnswer(n))
}

// upstreamAnswer is the upstream's answer to a body of n bytes: what an
// edge seals as the response.
func upstreamAnswer(n int64) []byte {
	return fmt.Appendf(nil, `{"ok":true,"bytes":%d}`, n)
}

// writeKeys makes the bench's keys, writes the JWKS the edge verifies
// tokens with, signs the bench's token, and writes the registry with the
// bench's A128CBC-HS256 key.
func (e *benchEnv) writeKeys() error {
	var err error
	if e.cbc, err = newBenchKey(jwe.EncA128CBCHS256); err != nil {
		return err
	}
	if e.gcm, err = newBenchKey(jwe.EncA256GCM); err != nil {
		return err
	}
	signer := testkit.NewSigner("bench-sig")
	e.jwks = filepath.Join(e.dir, "jwks.json")
	if err := os.WriteFile(e.jwks, testkit.JWKS(signer), 0o600); err != nil {
		return err
	}
	now := time.Now()
	e.token = signer.Token(testkit.With(testkit.Claims(benchClient, "bench", "bench-token", now),
		map[string]any{"exp": now.Add(time.Hour).Unix()}))
	e.registry = filepath.Join(e.dir, "keys.json")
	if e.keeper, err = keeper.CreateKeyFile(filepath.Join(e.dir, "keeper.key")); err != nil {
		return err
	}
	k, err := keeper.Open(context.Background(), e.keeper)
	if err != nil {
		return err
	}
	defer k.Close()
	return registryfile.Update(e.registry, registryfile.NewSealer(k), func(f *registryfile.File) error {
		_, err := f.Add(benchClient, e.cbc.kid, e.cbc.secret, "", false, now)
		return err
	})
}

func (e *benchEnv) close() {
	if e.plane != nil {
		e.plane.close()
	}
	if e.upstream != nil {
		_ = e.upstream.Close()
	}
	if e.upTLS != nil {
		_ = e.upTLS.Close()
	}
	_ = os.RemoveAll(e.dir)
}

// Configurations of the two edges. Both have the same global options and
// the same upstream; only the handlers differ.
const (
	globalOptions = `
	admin %[6]s
	persist_config off
	default_bind fd/3
	storage file_system %[1]s/caddy-%[2]s
	log {
		level ERROR
	}
`
	plainConfig = "{" + globalOptions + `}
http:// {
	reverse_proxy %[3]s {
%[7]s	}
}
`
	hdcConfig = "{" + globalOptions + `	hdc {
		keys {
%[4]s		}
		tokens {
			jwks_file %[5]s
		}
	}
}
# The hop as the reference Caddyfile makes it, but in clear text: only
# the headers the backend reads, none that reverse_proxy would add.
(backend) {
	hdc_forward
	reverse_proxy %[3]s {
		header_up -X-Forwarded-For
		header_up -X-Forwarded-Proto
		header_up -X-Forwarded-Host
		header_up -Via
%[7]s	}
}
http:// {
	hdc_tracing
	handle ` + uploadPath + ` {
		hdc_auth
		hdc_jwe {
			max_body 1GiB
			spool_threshold 1MiB
			spool_dir %[1]s
		}
		import backend
	}
	handle {
		hdc_auth
		hdc_jwe {
			max_body 8MiB
		}
		import backend
	}
}
`
)

// The paths the bench sends to: API routes as written, which the edge's
// hdc_auth requires; the bench's upstream echoes one and takes uploads on
// the other.
const (
	echoPath   = contract.PathSubscriptions
	uploadPath = contract.PathUpload
)

// Configurations of the breakdown's stages: the edge's route, then with
// hdc_auth, each forwarding what it got.
const (
	handleConfig = "{" + globalOptions + `}
http:// {
	handle {
		reverse_proxy %[3]s
	}
}
`
	authConfig = "{" + globalOptions + `	hdc {
		keys {
%[4]s		}
		tokens {
			jwks_file %[5]s
		}
	}
}
http:// {
	handle {
		hdc_auth
		reverse_proxy %[3]s
	}
}
`
)

// edge is a Caddy process started by the bench.
type edge struct {
	name     string
	url      string
	admin    string // the admin API's address, when profiling
	cmd      *exec.Cmd
	done     chan struct{}
	logs     *strings.Builder
	patience time.Duration // how long it may take to answer its first request, and to stop
}

// wrapper runs an edge under another program, valgrind: the command line
// before this binary's, the environment it adds, and how long the edge may
// take to answer its first request and to stop.
type wrapper struct {
	argv     []string
	env      []string
	patience time.Duration
}

// startEdge runs this binary as Caddy with the named configuration; with
// profile, its admin API (and so /debug/pprof) listens on loopback. The
// edge inherits its listeners (fd/3, and fd/4 for the admin API), so that
// no port is closed and reused.
func (e *benchEnv) startEdge(name string, profile bool) (*edge, error) {
	return e.startEdgeUnder(name, profile, wrapper{patience: 10 * time.Second})
}

// startEdgeUnder is startEdge with the edge run under w.
func (e *benchEnv) startEdgeUnder(name string, profile bool, w wrapper) (*edge, error) {
	site, addr, err := testkit.OpenListenFile()
	if err != nil {
		return nil, err
	}
	defer site.Close()
	files, admin, adminAddr := []*os.File{site}, "off", ""
	if profile {
		adminSock, a, err := testkit.OpenListenFile()
		if err != nil {
			return nil, err
		}
		defer adminSock.Close()
		files, admin, adminAddr = append(files, adminSock), "fd/4", a
	}
	_, port, _ := net.SplitHostPort(addr)
	path := filepath.Join(e.dir, name+"-"+port+".Caddyfile")
	if err := os.WriteFile(path, []byte(e.config(name, port, admin)), 0o600); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	argv := append(w.argv, self, edgeArg, "run", "--config", path, "--adapter", "caddyfile")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "HOME="+e.dir, "XDG_DATA_HOME="+e.dir, "XDG_CONFIG_HOME="+e.dir)
	cmd.Env = append(cmd.Env, w.env...)
	cmd.ExtraFiles = files
	logs := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ed := &edge{name: name, url: "http://" + addr, admin: adminAddr, cmd: cmd, done: make(chan struct{}), logs: logs, patience: w.patience}
	go func() { _ = cmd.Wait(); close(ed.done) }()
	return ed, ed.waitServing()
}

// config is the Caddyfile of the edge named name (one of the edge names
// above) on port, its admin API at admin.
func (e *benchEnv) config(name, port, admin string) string {
	registry := "\t\t\tregistry " + e.registry + "\n\t\t\tkeeper " + e.keeper + "\n"
	switch name {
	case plainEdge:
		return fmt.Sprintf(plainConfig, e.dir, port, e.upAddr, "", "", admin, "")
	case plainTLSEdge:
		return fmt.Sprintf(plainConfig, e.dir, port, e.upTLSURL, "", "", admin, e.hop.transportBlock())
	case handleEdge:
		return fmt.Sprintf(handleConfig, e.dir, port, e.upAddr, "", "", admin)
	case authEdge:
		return fmt.Sprintf(authConfig, e.dir, port, e.upAddr, registry, e.jwks, admin)
	case planeEdge:
		return fmt.Sprintf(hdcConfig, e.dir, port, e.upAddr, e.plane.keysBlock(), e.jwks, admin, "")
	case tlsEdge:
		return fmt.Sprintf(hdcConfig, e.dir, port, e.upTLSURL, registry, e.jwks, admin, e.hop.transportBlock())
	}
	return fmt.Sprintf(hdcConfig, e.dir, port, e.upAddr, registry, e.jwks, admin, "")
}

// startEdges starts the edges named, in order; when one fails to start,
// those started are stopped.
func (e *benchEnv) startEdges(profile bool, names ...string) ([]*edge, error) {
	var eds []*edge
	for _, name := range names {
		ed, err := e.startEdge(name, profile)
		if err != nil {
			stopEdges(eds)
			return nil, err
		}
		eds = append(eds, ed)
	}
	return eds, nil
}

func stopEdges(eds []*edge) {
	for _, ed := range eds {
		ed.stop()
	}
}

// waitServing waits until the edge answers HTTP: the inherited socket
// accepts connections before Caddy serves them.
func (ed *edge) waitServing() error {
	client := &http.Client{Timeout: min(ed.patience, time.Second)}
	if ed.patience > time.Minute {
		// Under valgrind, one request waits for the slow start: each
		// given up would be accepted later, and counted.
		client.Timeout = ed.patience
	}
	deadline := time.Now().Add(max(30*time.Second, ed.patience))
	for {
		if resp, err := client.Get(ed.url + "/"); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-ed.done:
			return fmt.Errorf("%s exited: %s", ed.name, ed.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			ed.stop()
			return errors.New(ed.name + " did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (ed *edge) stop() {
	_ = ed.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-ed.done:
	case <-time.After(ed.patience):
		_ = ed.cmd.Process.Kill()
		<-ed.done
	}
}

// userHZ is the unit of the CPU times in /proc/<pid>/stat on Linux.
const userHZ = 100

// cpuTime returns the CPU time (user and system, all threads) the process
// has used so far, from /proc.
func (ed *edge) cpuTime() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", ed.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: count from after it.
	var fields []string
	if i := bytes.LastIndexByte(b, ')'); i >= 0 {
		fields = strings.Fields(string(b[i+1:]))
	}
	if len(fields) < 13 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", ed.cmd.Process.Pid)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * time.Second / userHZ, nil
}

// memory returns the process's resident set size now and at its peak, in
// bytes, from /proc.
func (ed *edge) memory() (rss, peak int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", ed.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(fields[1], 10, 64)
		switch fields[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return rss, peak, sc.Err()
}

// request is a prepared request of the load: its body and headers. With
// seal, each sending has a body of its own, which sealed makes.
type request struct {
	path   string
	body   []byte
	header http.Header
	seal   func() []byte
}

// sealed returns the request as it is sent once: with a new body when
// each sending needs one.
func (r request) sealed() request {
	if r.seal != nil {
		r.body = r.seal()
	}
	return r
}

// plainRequest and encryptedRequest are the two shapes of the same call.
func (e *benchEnv) plainRequest(payload []byte) request {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	return request{path: echoPath, body: payload, header: h}
}

// encryptedRequest is payload sealed under k. Under an A256GCM key, every
// sending needs an envelope of its own (iat now and a new jti: the edge
// refuses a replayed or stale one), so the client seals the payload anew
// as it sends it; under the A128CBC-HS256 key, one envelope made now is
// sent every time.
func (e *benchEnv) encryptedRequest(k benchKey, path string, payload []byte) request {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Authorization", "Bearer "+e.token)
	h.Set(contract.HeaderEncryption, contract.EncryptionJWE)
	r := request{path: path, header: h}
	if k.key.Enc() == jwe.EncA256GCM {
		r.seal = func() []byte { return k.sealRequest(payload) }
	} else {
		r.body = k.sealRequest(payload)
	}
	return r
}

// jsonPayload returns a JSON object of about n bytes.
func jsonPayload(n int) []byte {
	filler := make([]byte, max(n-16, 0))
	for i := range filler {
		filler[i] = 'a' + byte(i%26)
	}
	b, _ := json.Marshal(map[string]string{"d": string(filler)})
	return b
}

// listed reports whether the comma-separated list names part.
func listed(list, part string) bool {
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == part {
			return true
		}
	}
	return false
}
