package scale

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/store/postgres/pgtest"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestFleetSectionAsWritten (first deployment, the goal) runs docs/deploy.md's
// "A fleet, step by step" as an operator pastes it, in its printed order,
// on an empty machine: the trial's S3 store (hdc-s3, built by the
// section's go build line), two backends on one PostgreSQL and its two
// buckets, two edges over HTTPS serving one certificate, a client
// onboarded with its credentials file and calling through the edges, a
// webhook delivered to a private receiver granted to the client's
// workspace, a rotation, a guarded retirement, the rotation found in the
// audit trail by the old key, and the trails verified against a
// checkpoint in the S3 bucket.
//
// What it changes is only where things are: the hosts' addresses
// (s3.internal's too) become loopback ports, /usr/local/bin, /etc/hdc and
// /var/lib move under a temporary directory, the database is a schema of
// the test's PostgreSQL, the site's name api.example.org is localhost (its
// certificate is made for that name) and each edge gets ports of its own;
// <clinic-1 client id> and <clinic-1 kid> are what hdc printed. The lines
// run in the operator's directory, which holds the repository's
// Caddyfile, as a checkout does; a go line runs in the repository itself.
// An hdc call is tried again until the edges have the key the line before
// made (within a second: the key plane's change feed), and hdc audit
// verify until a backend has written its first checkpoint, as the section
// says. Then, as a client behind the load balancer would, the credentials
// file serves through the other edge too.
func TestFleetSectionAsWritten(t *testing.T) {
	t.Parallel() // it times nothing: it runs beside the others that time nothing, after those that do
	f := newFleetDoc(t)
	var audit string
	verified := false
	for _, line := range hdctest.DocBlocks(t, "docs/deploy.md", "### A fleet, step by step")[0] {
		out := f.run(line)
		switch {
		case strings.HasPrefix(line, "hdc audit list"):
			audit = out
		case strings.HasPrefix(line, "hdc audit verify"):
			verified = true
		}
	}
	if !verified {
		t.Fatal("the section verifies no audit trail: hdc audit verify is not among its lines")
	}
	testkit.Eventually(t, 30*time.Second, "the receiver to verify the delivery", func() bool {
		return strings.Contains(f.receiver.String(), "signature verified")
	})
	// Through the other edge, with the same file: the load balancer's choice.
	f.call("hdc call --credentials clinic-1.json --base " + f.edges[1] + " --encrypt GET /notification/v1/connect/webhook/subscriptions")
	if !regexp.MustCompile(`"action":"key_rotate".*"replaced":\["` + regexp.QuoteMeta(f.ids["<clinic-1 kid>"]) + `"\]`).MatchString(audit) {
		t.Fatalf("hdc audit list --entity <clinic-1 kid> does not find the rotation that replaced it:\n%s", audit)
	}
}

// fleetDoc is the machine the fleet section runs on.
type fleetDoc struct {
	t        *testing.T
	root     string
	env      []string
	paths    *strings.Replacer
	edges    [2]string // the edges' base URLs
	metrics  [2]string // their metrics ports
	ids      map[string]string
	receiver *hdctest.SyncBuffer
	client   *http.Client // trusts the site's authority, once it is made
}

// newFleetDoc makes the machine: the programs on the PATH, the database and
// the buckets, the ports.
func newFleetDoc(t *testing.T) *fleetDoc {
	root := t.TempDir()
	bin := filepath.Dir(hdctest.Binary(t, "hdc"))
	hdctest.Binary(t, "hdc-backend")
	hdctest.Binary(t, "hdc-edge")
	usrBin := filepath.Join(root, "usr/local/bin")
	if err := os.MkdirAll(usrBin, 0o755); err != nil {
		t.Fatal(err)
	}
	caddyfile, err := os.ReadFile(filepath.Join(hdctest.RepoRoot, "Caddyfile"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "Caddyfile"), caddyfile, 0o644); err != nil {
		t.Fatal(err)
	}
	f := &fleetDoc{t: t, root: root, ids: map[string]string{}}
	hosts := map[string]string{}
	for _, h := range []string{"10.0.0.11:9080", "10.0.0.11:9081", "10.0.0.12:9080", "10.0.0.12:9081", "10.0.0.31:9999", "s3.internal:9000"} {
		hosts[h] = testkit.FreeAddr(t)
	}
	for i := range f.edges {
		_, port, _ := net.SplitHostPort(testkit.FreeAddr(t))
		f.edges[i] = "https://localhost:" + port
		_, f.metrics[i], _ = net.SplitHostPort(testkit.FreeAddr(t))
	}
	f.paths = strings.NewReplacer("/usr/local/bin/", usrBin+"/",
		"/etc/hdc", filepath.Join(root, "etc/hdc"), "/var/lib/", filepath.Join(root, "var/lib")+"/",
		"postgres://hdc:hdc-db-password@db.internal:5432/hdc?sslmode=disable", pgtest.URL(t),
		"s3.internal:9000", hosts["s3.internal:9000"],
		"10.0.0.11:9080", hosts["10.0.0.11:9080"], "10.0.0.11:9081", hosts["10.0.0.11:9081"],
		"10.0.0.12:9080", hosts["10.0.0.12:9080"], "10.0.0.12:9081", hosts["10.0.0.12:9081"],
		"10.0.0.31:9999", hosts["10.0.0.31:9999"], "https://api.example.org", f.edges[0], "api.example.org", "localhost")
	f.env = append(os.Environ(), hdctest.GoEnv(t)...)
	f.env = append(f.env, "PATH="+usrBin+":"+bin+":"+os.Getenv("PATH"), "HOME="+root, "XDG_CACHE_HOME="+filepath.Join(root, "cache"),
		"HDC_DATABASE_URL=", "HDC_KEEPER=", "HDC_DATA=", "HDC_KEY_REGISTRY=", "HDC_AUDIT_CHECKPOINT_INTERVAL=",
		"AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_PROFILE=", "AWS_CONFIG_FILE=", "AWS_SHARED_CREDENTIALS_FILE=")
	return f
}

// run runs one line of the section, as the machine's: in the background
// when it ends with &, else in the operator's directory, returning what it
// printed.
func (f *fleetDoc) run(line string) string {
	line = f.edgeLine(f.paths.Replace(line))
	line = placeholder.ReplaceAllStringFunc(line, func(p string) string { return f.ids[p] })
	if name, value, ok := strings.Cut(strings.TrimPrefix(line, "export "), "="); ok && strings.HasPrefix(line, "export ") {
		for _, kv := range strings.Fields(name + "=" + value) { // export A=1 B=2
			k, v, _ := strings.Cut(kv, "=")
			f.env = append(f.env, k+"="+strings.Trim(v, "'"))
		}
		return ""
	}
	if names, ok := strings.CutPrefix(line, "unset "); ok {
		for _, name := range strings.Fields(names) {
			f.env = append(f.env, name+"=") // the last of a name is the one exec passes
		}
		return ""
	}
	if bg, ok := strings.CutSuffix(line, "&"); ok {
		out := hdctest.StartBackground(f.t, f.root, bg, f.env)
		switch {
		case strings.HasPrefix(bg, "hdc webhooks listen"):
			f.receiver = out
		case strings.HasPrefix(bg, "hdc-s3 "):
			testkit.Eventually(f.t, 30*time.Second, "hdc-s3's start-up line", func() bool {
				return strings.Contains(out.String(), "hdc-s3: serving")
			})
		}
		return ""
	}
	switch {
	case strings.HasPrefix(line, "hdc call"):
		return f.call(line)
	case strings.HasPrefix(line, "hdc audit verify"):
		return f.verify(line)
	case strings.HasPrefix(line, "go "):
		return hdctest.RunLine(f.t, line, f.env) // in the checkout
	}
	out := hdctest.RunLineIn(f.t, f.root, line, f.env)
	f.note(line, out)
	return out
}

// edgeLine gives an edge's line the ports of the edge whose host it names.
func (f *fleetDoc) edgeLine(line string) string {
	for i, host := range []string{"10.0.0.21", "10.0.0.22"} {
		if strings.Contains(line, "HDC_BIND="+host) {
			port := strings.TrimPrefix(f.edges[i], "https://localhost:")
			return strings.NewReplacer("HDC_SITE=localhost", "HDC_SITE=https://localhost:"+port,
				"HDC_BIND="+host, "HDC_BIND=127.0.0.1 HDC_METRICS_PORT="+f.metrics[i]).Replace(line)
		}
	}
	return line
}

// note keeps the ids a line printed, for the placeholders of later lines.
func (f *fleetDoc) note(line, out string) {
	var printed struct {
		ClientID string `json:"client_id"`
		Kid      string `json:"kid"`
	}
	switch {
	case strings.HasPrefix(line, "hdc clients create --workspace clinic-1"):
		if json.Unmarshal([]byte(out), &printed) != nil || printed.ClientID == "" {
			f.t.Fatalf("%s printed %q", line, out)
		}
		f.ids["<clinic-1 client id>"] = printed.ClientID
	case strings.HasPrefix(line, "hdc keys add") && strings.Contains(line, f.ids["<clinic-1 client id>"]):
		if json.Unmarshal([]byte(out), &printed) != nil || printed.Kid == "" {
			f.t.Fatalf("%s printed %q", line, out)
		}
		f.ids["<clinic-1 kid>"] = printed.Kid
	}
}

// call runs an hdc call line once both edges answer, again until it
// succeeds within a minute: the key the line before made reaches the edges
// through the backends' change feed.
func (f *fleetDoc) call(line string) string {
	f.t.Helper()
	f.waitForEdges()
	var out string
	testkit.Eventually(f.t, time.Minute, line, func() bool {
		var err error
		out, err = hdctest.TryLineIn(f.root, line, f.env)
		return err == nil
	})
	return out
}

// verify runs the hdc audit verify line again until it succeeds within
// three minutes: it exits 3 until a backend has written the first
// checkpoint, HDC_AUDIT_CHECKPOINT_INTERVAL after the first change. Then
// it must have verified against a checkpoint in the section's S3 bucket.
func (f *fleetDoc) verify(line string) string {
	f.t.Helper()
	var stdout, stderr strings.Builder
	var err error
	testkit.Eventually(f.t, 3*time.Minute, line, func() bool {
		stdout.Reset()
		stderr.Reset()
		cmd := exec.CommandContext(f.t.Context(), "bash", "-euo", "pipefail", "-c", line)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = f.root, f.env, &stdout, &stderr
		err = cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() != 3 {
			f.t.Fatalf("%s: %v\n%s%s", line, err, stdout.String(), stderr.String())
		}
		return err == nil
	})
	if !strings.Contains(stderr.String(), "verifying against the checkpoint of ") || !strings.Contains(stderr.String(), " in s3://hdc-audit") {
		f.t.Fatalf("%s verified against no checkpoint of the bucket hdc-audit:\n%s", line, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"workspace":"clinic-1"`) {
		f.t.Fatalf("%s printed no line for clinic-1's trail:\n%s", line, stdout.String())
	}
	return stdout.String()
}

// waitForEdges waits until both edges answer over HTTPS with the site's
// certificate, which the section makes before it starts them.
func (f *fleetDoc) waitForEdges() {
	if f.client == nil {
		pem, err := os.ReadFile(filepath.Join(f.root, "etc/hdc/site-ca.pem"))
		if err != nil {
			f.t.Fatal(err)
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(pem)
		f.client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	}
	for _, base := range f.edges {
		testkit.Eventually(f.t, time.Minute, fmt.Sprint("the edge at ", base), func() bool {
			resp, err := f.client.Get(base + "/.well-known/jwks.json")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
	}
}

// placeholder is a value the section's reader fills in from what an
// earlier line printed.
var placeholder = regexp.MustCompile(`<clinic-1 [a-z ]+>`)
