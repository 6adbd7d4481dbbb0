package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// nobody is the user and group another local user's process runs as.
const nobody = 65534

// adminSocket is the form of HDC_EDGE_ADMIN that only the edge's own user
// may reach: a unix socket of mode 0600.
var adminSocket = regexp.MustCompile(`^unix/(/.+)\|0600$`)

// TestEdgeAdminIsNoWayIn (fourth review, finding 1): in every shape the
// docs deploy, the edge's admin API is a unix socket that only the edge's
// user may open, or off. The review's attack, a route loaded into the
// running edge that proxies a public path to the backend's internal
// listener with the edge's own hop certificate, reads a client's key when
// it reaches the admin API (the edge's own user here, to show the attack
// is real), and fails from another local user's process.
func TestEdgeAdminIsNoWayIn(t *testing.T) {
	t.Parallel()
	shapes := edgeAdminShapes(t)
	attacked := map[string]bool{} // the permission suffixes attacked, one stack each
	for _, sh := range shapes {
		if sh.admin == "off" {
			t.Logf("%s: the admin API is off", sh.name)
			continue
		}
		m := adminSocket.FindStringSubmatch(sh.admin)
		if m == nil {
			t.Errorf("%s: HDC_EDGE_ADMIN=%q, want a unix socket of mode 0600 (unix//path|0600) or off", sh.name, sh.admin)
			continue
		}
		if !attacked["0600"] {
			attacked["0600"] = true
			t.Run("attack/"+sh.name, func(t *testing.T) { attackAdmin(t, sh.admin) })
		}
	}
}

// adminShape is what one deployment shape sets HDC_EDGE_ADMIN to.
type adminShape struct{ name, admin string }

// edgeAdminShapes returns HDC_EDGE_ADMIN as the systemd unit, the edge's
// image and the Compose file set it; unset is the reference Caddyfile's
// default.
func edgeAdminShapes(t *testing.T) []adminShape {
	t.Helper()
	caddyDefault := regexp.MustCompile(`admin \{\$HDC_EDGE_ADMIN:([^}]*)\}`).FindStringSubmatch(readRepoFile(t, "Caddyfile"))
	if caddyDefault == nil {
		t.Fatal("the Caddyfile does not set admin from HDC_EDGE_ADMIN")
	}
	or := func(v string) string {
		if v == "" {
			return caddyDefault[1]
		}
		return v
	}
	unit := systemdUnits[pki.Edge]
	image := parseContainerfile(t, "deploy/Containerfile").env("edge")
	var c composeFile
	if err := yaml.Unmarshal([]byte(readRepoFile(t, "deploy/compose.yaml")), &c); err != nil {
		t.Fatal(err)
	}
	compose := image["HDC_EDGE_ADMIN"]
	if v, ok := c.Services["edge"].Environment["HDC_EDGE_ADMIN"]; ok {
		compose = os.Expand(v, composeDefault)
	}
	return []adminShape{
		{"systemd", or(unitEnv(readRepoFile(t, "deploy/systemd/"+unit), unit)["HDC_EDGE_ADMIN"])},
		{"container image", or(image["HDC_EDGE_ADMIN"])},
		{"compose", or(compose)},
		{"reference Caddyfile", caddyDefault[1]},
	}
}

// attackAdmin runs an edge whose admin API is admin, its socket moved to a
// directory every user may enter (so that only the socket's own mode
// stands in the way), and loads the review's route through it: as another
// user, which must fail, then as the edge's own, which must read a key.
func attackAdmin(t *testing.T, admin string) {
	if os.Geteuid() != 0 {
		t.Skip("the attack needs root, to run a process as another user")
	}
	dir, err := os.MkdirTemp("", "hdc-admin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, filepath.Base(adminSocket.FindStringSubmatch(admin)[1]))
	s := hdctest.StartStackEnv(t, nil, []string{"HDC_EDGE_ADMIN=unix/" + sock + "|0600"})
	c := s.NewClient("admin-attack")
	route := probeRoute(t, s)
	probe := s.Edge + "/rt4probe/internal/v1/keys/" + c.Kid

	if out, err := loadRoute(sock, route, nobody); err == nil {
		t.Fatalf("another user loaded a route into the edge's configuration:\n%s", out)
	}
	if status, body := get(t, probe); status != http.StatusNotFound || strings.Contains(body, c.Key) {
		t.Fatalf("after another user's attempt, the probe path answered %d %s", status, body)
	}
	// The attack is real: whoever reaches the admin API reads the key.
	if out, err := loadRoute(sock, route, os.Geteuid()); err != nil {
		t.Fatalf("the edge's own user could not load the route: %v\n%s", err, out)
	}
	if status, body := get(t, probe); status != http.StatusOK || !strings.Contains(body, c.Key) {
		t.Fatalf("through the edge's own admin API, the probe answered %d %s; want the client's key", status, body)
	}
}

// probeRoute is the review's route: /rt4probe/… proxied to the backend's
// internal listener with the edge's hop certificate, first of the site's.
func probeRoute(t *testing.T, s *hdctest.Stack) []byte {
	t.Helper()
	route := map[string]any{
		"match": []any{map[string]any{"path": []string{"/rt4probe/*"}}},
		"handle": []any{
			map[string]any{"handler": "rewrite", "strip_path_prefix": "/rt4probe"},
			map[string]any{"handler": "reverse_proxy", "upstreams": []any{map[string]any{"dial": strings.TrimPrefix(s.Internal, "https://")}},
				"transport": map[string]any{"protocol": "http", "tls": map[string]any{
					"client_certificate_file":     filepath.Join(s.Hop, pki.CertFile(pki.Edge)),
					"client_certificate_key_file": filepath.Join(s.Hop, pki.KeyFile(pki.Edge)),
					"ca":                          map[string]any{"provider": "file", "pem_files": []string{filepath.Join(s.Hop, pki.CAFile)}},
					"server_name":                 "hdc-backend"}}},
		},
		"terminal": true,
	}
	b, err := json.Marshal(route)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loadRoute puts route first in the edge's site through the admin API's
// unix socket at sock, with curl run as the user uid.
func loadRoute(sock string, route []byte, uid int) (string, error) {
	cmd := exec.Command("curl", "--silent", "--show-error", "--fail", "--unix-socket", sock, "-X", "PUT",
		"-H", "Content-Type: application/json", "--data-binary", "@-", "http://localhost/config/apps/http/servers/srv0/routes/0")
	cmd.Stdin = bytes.NewReader(route)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("curl: %w", err)
	}
	return string(out), nil
}

// get returns the status and body of a GET of url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}
