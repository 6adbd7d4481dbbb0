package upcmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/dustin/go-humanize"
	hdcconfig "github.com/health-data-connect/hdc"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/opscmd"
	"github.com/health-data-connect/hdc/internal/pki"
)

// checkEdgeAddrs refuses addresses of the edge that are in use. Caddy
// opens its listeners with SO_REUSEPORT, for its own reloads, so a second
// stack on a busy address would start silently and the kernel would split
// the connections between the two. A plain listen fails on such an address
// (Linux shares a port only between sockets that all ask for it), and is
// closed at once for Caddy to take the address.
func (o upOptions) checkEdgeAddrs() error {
	addrs := []struct{ flag, addr string }{{"--listen", o.listen}, {"--metrics", o.metrics}}
	for _, a := range addrs {
		l, err := net.Listen("tcp", a.addr)
		if err != nil {
			return fmt.Errorf("%s %s is not free (%v): choose another with %s", a.flag, a.addr, errors.Unwrap(err), a.flag)
		}
		l.Close()
	}
	return nil
}

// adminSocket is the edge's admin socket in the data directory.
const adminSocket = "edge-admin.sock"

// adminAddress is the Caddyfile's HDC_EDGE_ADMIN for --admin: a unix
// socket that only this user may open (mode 0600), at <data>/edge-admin.sock
// by default, or off. A TCP address is refused: any local user could load
// a route into the edge that proxies with its hop certificate.
func adminAddress(flag, data string) (string, error) {
	switch {
	case flag == "off":
		return flag, nil
	case flag == "":
		flag = filepath.Join(data, adminSocket)
	case isTCPAddress(flag):
		return "", fmt.Errorf("--admin %s: the admin API listens on a unix socket (a path) or is off, never on a TCP port, which every local user could reach", flag)
	}
	path, err := filepath.Abs(flag)
	if err != nil {
		return "", err
	}
	return "unix/" + path + "|0600", nil
}

// isTCPAddress reports whether s reads as a host and port rather than a
// file's path.
func isTCPAddress(s string) bool {
	if strings.ContainsRune(s, '/') {
		return false
	}
	_, port, err := net.SplitHostPort(s)
	return err == nil && port != ""
}

// adminGuide is how hdc up's guide shows the admin API at addr.
func adminGuide(addr string) string {
	path, ok := strings.CutPrefix(addr, "unix/")
	if !ok {
		return addr
	}
	return "curl --unix-socket " + strings.TrimSuffix(path, "|0600") + " http://localhost/hdc/keys"
}

// listenPair opens the backend's two listeners, so that a busy port is
// reported before anything else starts.
func listenPair(public, internal string) (net.Listener, net.Listener, error) {
	p, err := net.Listen("tcp", public)
	if err != nil {
		return nil, nil, fmt.Errorf("backend listener: %w (choose another with --backend-listen)", err)
	}
	i, err := net.Listen("tcp", internal)
	if err != nil {
		p.Close()
		return nil, nil, fmt.Errorf("internal listener: %w (choose another with --internal-listen)", err)
	}
	return p, i, nil
}

// startEdge adapts the Caddyfile with the environment it reads and loads it
// into this process's Caddy.
func startEdge(o upOptions, data, hopDir string) error {
	src, name := hdcconfig.Caddyfile, "Caddyfile (embedded)"
	if o.caddyfile != "" {
		b, err := os.ReadFile(o.caddyfile)
		if err != nil {
			return err
		}
		src, name = b, o.caddyfile
	}
	if err := o.setEdgeEnv(hopDir); err != nil {
		return err
	}
	cfgJSON, _, err := caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}.Adapt(src, map[string]any{"filename": name})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
		return err
	}
	// Keep Caddy's files under data, and its logs at our level and in our
	// format.
	cfg["storage"] = map[string]any{"module": "file_system", "root": filepath.Join(data, "caddy")}
	setLogging(cfg, o.logLevel)
	cfgJSON, err = json.Marshal(cfg)
	if err != nil {
		return err
	}
	if err := caddy.Load(cfgJSON, true); err != nil {
		return fmt.Errorf("starting the edge: %w", err)
	}
	return nil
}

// setEdgeEnv sets the variables the reference Caddyfile reads to the
// addresses and files of this stack.
func (o upOptions) setEdgeEnv(hopDir string) error {
	host, port, err := net.SplitHostPort(o.listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	metricsHost, metricsPort, err := net.SplitHostPort(o.metrics)
	if err != nil {
		return fmt.Errorf("--metrics: %w", err)
	}
	maxBody, err := o.edgeUploadMaxBody()
	if err != nil {
		return err
	}
	for k, v := range map[string]string{
		uploadMaxBodyEnv:       maxBody,
		"HDC_SITE":             "http://:" + port,
		"HDC_SITE_OTHER_HOSTS": "", // a site of no host serves every host
		"HDC_BIND":             host,
		"HDC_EDGE_ADMIN":       o.admin,
		"HDC_METRICS_BIND":     metricsHost,
		"HDC_METRICS_PORT":     metricsPort,
		"HDC_KEY_REGISTRY":     "", // the keys are the backend's
		opscmd.KeeperEnv:       o.backend.Keeper,
		"HDC_BACKEND":          o.backendListen,
		"HDC_BACKEND_INTERNAL": "https://" + o.internalListen,
		"HDC_HOP_CA":           filepath.Join(hopDir, pki.CAFile),
		"HDC_HOP_CERT":         filepath.Join(hopDir, pki.CertFile(pki.Edge)),
		"HDC_HOP_KEY":          filepath.Join(hopDir, pki.KeyFile(pki.Edge)),
	} {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return nil
}

// edgeUploadMaxBody is the edge's cap on an upload's body: --upload-max-body,
// or twice the backend's upload limit, which an encrypted upload's envelope
// (base64 in JSON, encrypted, then base64url) needs with room to spare.
func (o upOptions) edgeUploadMaxBody() (string, error) {
	if o.uploadMaxBody == "" {
		return strings.ReplaceAll(humanize.IBytes(2*uint64(o.backend.UploadLimit)), " ", ""), nil
	}
	if _, err := humanize.ParseBytes(o.uploadMaxBody); err != nil {
		return "", fmt.Errorf("--upload-max-body (%s): %q is not a size such as 64MiB", uploadMaxBodyEnv, o.uploadMaxBody)
	}
	return o.uploadMaxBody, nil
}

// setLogging sets every log of an adapted Caddy configuration to level and
// to JSON, the format of hdc up's own logger: the default log, and the
// access log the Caddyfile defines. A log with a filter (the reference
// Caddyfile's, which keep query values and headers out of every line)
// keeps it: it wraps JSON.
func setLogging(cfg map[string]any, level string) {
	logging, _ := cfg["logging"].(map[string]any)
	if logging == nil {
		logging = map[string]any{}
		cfg["logging"] = logging
	}
	logs, _ := logging["logs"].(map[string]any)
	if logs == nil {
		logs = map[string]any{}
		logging["logs"] = logs
	}
	def, _ := logs["default"].(map[string]any)
	if def == nil {
		def = map[string]any{}
		logs["default"] = def
	}
	if enc, _ := def["encoder"].(map[string]any); enc == nil || enc["format"] != "filter" {
		def["encoder"] = map[string]any{"format": "json"}
	}
	for _, l := range logs {
		l.(map[string]any)["level"] = strings.ToUpper(level)
	}
}
