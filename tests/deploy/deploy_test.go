package deploy

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"debug/elf"
	"errors"
	"fmt"
	"go/version"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// readRepoFile returns a file of the repository, by its slash-separated path.
func readRepoFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hdctest.RepoRoot, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// buildPrograms returns the names of the programs deploy/build.sh builds:
// the last element of each package it names.
func buildPrograms(t testing.TB) []string {
	t.Helper()
	var names []string
	for _, m := range regexp.MustCompile(`\./(?:cmd|deploy)/([a-z0-9-]+)`).FindAllStringSubmatch(readRepoFile(t, "deploy/build.sh"), -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	return names
}

// staticELF returns an error unless the ELF file at path is statically
// linked: no program interpreter, no dynamic section, no shared library.
func staticELF(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			return errors.New("it has a program interpreter (PT_INTERP): it is dynamically linked")
		case elf.PT_DYNAMIC:
			return errors.New("it has a dynamic section (PT_DYNAMIC)")
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		return fmt.Errorf("it needs shared libraries %q", libs)
	}
	return nil
}

// A containerfile is a Containerfile's stages, in order.
type containerfile struct {
	args   map[string]string // the ARGs before the first FROM, with their defaults
	stages []*containerStage
}

// A containerStage is one FROM and the instructions after it.
type containerStage struct {
	name, from string
	instrs     []containerInstr
}

// A containerInstr is one instruction, its continuation lines joined.
type containerInstr struct {
	cmd  string // upper case: RUN, COPY, ENV...
	args string
}

// parseContainerfile reads the Containerfile at path (repository-relative):
// comments dropped, continuation lines joined.
func parseContainerfile(t testing.TB, path string) *containerfile {
	t.Helper()
	cf := &containerfile{args: map[string]string{}}
	var pending string
	sc := bufio.NewScanner(strings.NewReader(readRepoFile(t, path)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutSuffix(line, `\`); ok {
			pending += rest + " "
			continue
		}
		line, pending = pending+line, ""
		cmd, args, _ := strings.Cut(line, " ")
		cmd, args = strings.ToUpper(cmd), strings.TrimSpace(args)
		switch {
		case cmd == "FROM":
			var fields []string
			for _, f := range strings.Fields(args) {
				if !strings.HasPrefix(f, "--") {
					fields = append(fields, f)
				}
			}
			s := &containerStage{from: fields[0]}
			if len(fields) == 3 && strings.EqualFold(fields[1], "AS") {
				s.name = fields[2]
			}
			cf.stages = append(cf.stages, s)
		case len(cf.stages) == 0:
			if cmd == "ARG" {
				k, v, _ := strings.Cut(args, "=")
				cf.args[k] = v
			}
		default:
			s := cf.stages[len(cf.stages)-1]
			s.instrs = append(s.instrs, containerInstr{cmd, args})
		}
	}
	if len(cf.stages) == 0 {
		t.Fatalf("%s: no FROM", path)
	}
	return cf
}

// stage returns the stage called name, or nil.
func (cf *containerfile) stage(name string) *containerStage {
	for _, s := range cf.stages {
		if s.name == name {
			return s
		}
	}
	return nil
}

// chain returns the stages that make the stage called name, base first.
func (cf *containerfile) chain(name string) []*containerStage {
	s := cf.stage(name)
	if s == nil {
		return nil
	}
	return append(cf.chain(s.from), s)
}

// env returns the environment the ENV instructions give the stage called
// name, those of the stages it is built on included.
func (cf *containerfile) env(name string) map[string]string {
	env := map[string]string{}
	for _, s := range cf.chain(name) {
		for _, in := range s.instrs {
			if in.cmd == "ENV" {
				for _, kv := range strings.Fields(in.args) {
					k, v, _ := strings.Cut(kv, "=")
					env[k] = v
				}
			}
		}
	}
	return env
}

// last returns the arguments of the last instruction cmd of the stage
// called name or of the stages it is built on, and whether there is one.
func (cf *containerfile) last(name, cmd string) (string, bool) {
	chain := cf.chain(name)
	for i := len(chain) - 1; i >= 0; i-- {
		for j := len(chain[i].instrs) - 1; j >= 0; j-- {
			if in := chain[i].instrs[j]; in.cmd == cmd {
				return in.args, true
			}
		}
	}
	return "", false
}

// adaptEdge adapts the reference Caddyfile with hdc-edge in exactly the
// environment env, none of the test's own HDC_* variables, and returns
// Caddy's JSON configuration.
func adaptEdge(t *testing.T, env map[string]string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(hdctest.ImageBinaries(t), "hdc-edge"), "adapt", "--config", filepath.Join(hdctest.RepoRoot, "Caddyfile"))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hdc-edge adapt: %v\n%s", err, stderr.Bytes())
	}
	return string(out)
}

// TestDeployStaticBuild builds the programs as the image does and checks
// that each is statically linked and runs.
func TestDeployStaticBuild(t *testing.T) {
	t.Parallel()
	cf := parseContainerfile(t, "deploy/Containerfile")
	var out string
	for _, in := range cf.stage("build").instrs {
		if in.cmd != "RUN" || !strings.Contains(in.args, "deploy/build.sh") {
			continue
		}
		if out != "" {
			t.Fatal("the Containerfile runs deploy/build.sh twice")
		}
		f := strings.Fields(in.args)
		out = f[slices.Index(f, "deploy/build.sh")+1]
	}
	if out == "" {
		t.Fatal("the Containerfile's build stage does not run deploy/build.sh: this test checks another build than the image's")
	}
	if !slices.ContainsFunc(cf.stage("runtime").instrs, func(in containerInstr) bool {
		return in.cmd == "COPY" && in.args == "--from=build "+out+"/ /usr/local/bin/"
	}) {
		t.Fatalf("the runtime stage does not copy deploy/build.sh's output %s/ to /usr/local/bin/", out)
	}

	want := buildPrograms(t)
	for _, p := range []string{"hdc", "hdc-backend", "hdc-edge", "hdc-healthcheck"} {
		if !slices.Contains(want, p) {
			t.Fatalf("deploy/build.sh does not build %s (it builds %q)", p, want)
		}
	}
	dir := hdctest.ImageBinaries(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("deploy/build.sh built %q, want %q", got, want)
	}

	for _, p := range want {
		t.Run("static/"+p, func(t *testing.T) {
			if err := staticELF(filepath.Join(dir, p)); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		})
	}
	// The check itself, on a program every Debian has, linked to the C library.
	t.Run("static/a dynamic program is caught", func(t *testing.T) {
		if _, err := os.Stat("/bin/sh"); err != nil {
			t.Skip("no /bin/sh to check the check with:", err)
		}
		if staticELF("/bin/sh") == nil {
			t.Fatal("/bin/sh passed as statically linked")
		}
	})

	for _, args := range [][]string{{"hdc-edge", "version"}, {"hdc-backend", "--version"}, {"hdc", "version"}} {
		t.Run("runs/"+strings.Join(args, " "), func(t *testing.T) {
			out, err := hdctest.RunProgram(t, nil, filepath.Join(dir, args[0]), args[1:]...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(out), args[0]+" ") {
				t.Fatalf("printed %q", out)
			}
		})
	}
	// docs/deploy.md names these for builds of stock Caddy with xcaddy.
	t.Run("runs/hdc-edge list-modules", func(t *testing.T) {
		out, err := hdctest.RunProgram(t, nil, filepath.Join(dir, "hdc-edge"), "list-modules")
		if err != nil {
			t.Fatal(err)
		}
		modules := strings.Fields(string(out))
		for _, id := range []string{"hdc", "admin.api.hdc", "http.handlers.hdc_auth", "http.handlers.hdc_jwe", "http.handlers.hdc_forward", "caddy.listeners.hdc_framing"} {
			if !slices.Contains(modules, id) {
				t.Errorf("module %s is missing", id)
			}
		}
	})
}

// TestDeployHealthcheck: hdc-healthcheck, the image's probe, succeeds on a
// 2xx answer only.
func TestDeployHealthcheck(t *testing.T) {
	t.Parallel()
	probe := filepath.Join(hdctest.ImageBinaries(t), "hdc-healthcheck")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
		case "/no-content":
			w.WriteHeader(http.StatusNoContent)
		case "/unavailable":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/redirect":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/slow":
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/"
	ln.Close()
	// The backend's internal listener: the hop's TLS.
	hop := filepath.Join(t.TempDir(), "tls")
	if err := pki.InitDir(hop, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(hop, pki.CertFile(pki.Backend)), filepath.Join(hop, pki.KeyFile(pki.Backend)))
	if err != nil {
		t.Fatal(err)
	}
	hopSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	hopSrv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	hopSrv.StartTLS()
	defer hopSrv.Close()
	ca := filepath.Join(hop, pki.CAFile)

	tests := []struct {
		name string
		args []string
		ok   bool
	}{
		{"200", []string{srv.URL + "/ok"}, true},
		{"204", []string{srv.URL + "/no-content"}, true},
		{"503", []string{srv.URL + "/unavailable"}, false},
		{"404", []string{srv.URL + "/missing"}, false},
		{"a redirect is not followed", []string{srv.URL + "/redirect"}, false},
		{"too slow", []string{"-timeout", "200ms", srv.URL + "/slow"}, false},
		{"nothing listening", []string{closed}, false},
		{"not http", []string{"ftp://127.0.0.1/"}, false},
		{"no URL", nil, false},
		{"two URLs", []string{srv.URL + "/ok", srv.URL + "/ok"}, false},
		{"the hop's TLS", []string{"-ca", ca, "-server-name", "hdc-backend", hopSrv.URL + "/readyz"}, true},
		{"the hop's TLS, another name", []string{"-ca", ca, "-server-name", "someone", hopSrv.URL + "/readyz"}, false},
		{"the hop's TLS, the system's roots", []string{"-server-name", "hdc-backend", hopSrv.URL + "/readyz"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := exec.Command(probe, tt.args...).CombinedOutput()
			if tt.ok {
				if err != nil {
					t.Fatalf("hdc-healthcheck %q: %v\n%s", tt.args, err, out)
				}
				return
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("hdc-healthcheck %q: %v, want exit status 1\n%s", tt.args, err, out)
			}
		})
	}
}

// TestDeployContainerfile holds the Containerfile to the module and to the
// reference Caddyfile.
func TestDeployContainerfile(t *testing.T) {
	t.Parallel()
	cf := parseContainerfile(t, "deploy/Containerfile")
	progs := buildPrograms(t)

	t.Run("Go version", func(t *testing.T) {
		m := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(readRepoFile(t, "go.mod"))
		if m == nil {
			t.Fatal("go.mod has no go line")
		}
		image := cf.args["GO_VERSION"]
		if !strings.Contains(cf.stage("build").from, "golang:${GO_VERSION}") {
			t.Fatalf("the build stage is FROM %s, not golang:${GO_VERSION}", cf.stage("build").from)
		}
		if !version.IsValid("go"+image) || version.Compare("go"+image, "go"+m[1]) < 0 {
			t.Fatalf("GO_VERSION %q is older than go.mod's go %s", image, m[1])
		}
	})

	for _, target := range []string{"backend", "edge"} {
		t.Run(target, func(t *testing.T) {
			if cf.stage(target) == nil {
				t.Fatalf("no target %s", target)
			}
			user, ok := cf.last(target, "USER")
			if !ok || user == "0" || strings.HasPrefix(user, "0:") || strings.HasPrefix(user, "root") {
				t.Fatalf("the %s image runs as %q, want an unprivileged user", target, user)
			}
			entry, _ := cf.last(target, "ENTRYPOINT")
			if !regexp.MustCompile(`^\["/usr/local/bin/hdc-`+target+`"\]$`).MatchString(entry) || !slices.Contains(progs, "hdc-"+target) {
				t.Fatalf("the %s image's entrypoint is %s", target, entry)
			}
			expose, _ := cf.last(target, "EXPOSE")
			if slices.Contains(strings.Fields(expose), "9081") {
				t.Fatal("the backend's internal listener is EXPOSEd: docker run -P would publish it")
			}
		})
	}

	t.Run("edge configuration", func(t *testing.T) {
		if !slices.ContainsFunc(cf.stage("runtime").instrs, func(in containerInstr) bool {
			return in.cmd == "COPY" && strings.HasSuffix(" "+in.args, " Caddyfile /etc/hdc/Caddyfile")
		}) {
			t.Fatal("the image does not hold the reference Caddyfile at /etc/hdc/Caddyfile")
		}
		if cmd, _ := cf.last("edge", "CMD"); !strings.Contains(cmd, `"/etc/hdc/Caddyfile"`) {
			t.Fatalf("the edge runs %s, not /etc/hdc/Caddyfile", cmd)
		}
		env := cf.env("edge")
		env["HDC_SITE"] = "api.example.org"
		config := adaptEdge(t, env)
		for _, want := range []string{"/etc/hdc/tls/ca.pem", "/etc/hdc/tls/edge.pem", "/etc/hdc/tls/edge-key.pem", `"0.0.0.0:443"`} {
			if !strings.Contains(config, want) {
				t.Errorf("the image's configuration does not have %s", want)
			}
		}
		// No registry file: the keys are the backend's, looked up over the hop.
		if env["HDC_KEY_REGISTRY"] != "" || !strings.Contains(config, `"backends":["https://127.0.0.1:9081"]`) {
			t.Errorf("the image's edge reads its keys from %q, not the backend's key plane", env["HDC_KEY_REGISTRY"])
		}
	})
}

// systemdUnits are deploy/systemd's units, by role.
var systemdUnits = map[pki.Role]string{pki.Backend: "hdc-backend.service", pki.Edge: "hdc-edge.service"}

// unitValues returns the values of key in a unit file, in order.
func unitValues(unit, key string) []string {
	var vals []string
	for _, line := range strings.Split(unit, "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			vals = append(vals, v)
		}
	}
	return vals
}

// unitEnv returns the environment a unit's Environment= lines set, with
// the specifiers %S and %d replaced as systemd replaces them for a system
// service called name.
func unitEnv(unit, name string) map[string]string {
	r := strings.NewReplacer("%S", "/var/lib", "%d", "/run/credentials/"+name)
	env := map[string]string{}
	for _, v := range unitValues(unit, "Environment") {
		for _, kv := range strings.Fields(r.Replace(v)) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
	}
	return env
}

// TestDeploySystemd checks the units with systemd-analyze: verify (every
// option known and well-formed, the programs there) and security (the
// exposure systemd computes from the hardening options).
func TestDeploySystemd(t *testing.T) {
	t.Parallel()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (Debian's package systemd; scripts/test.sh installs it)")
	}
	bin := hdctest.ImageBinaries(t)
	dir := t.TempDir()
	var paths []string
	for _, role := range []pki.Role{pki.Backend, pki.Edge} {
		name := systemdUnits[role]
		unit := readRepoFile(t, "deploy/systemd/"+name)
		if !regexp.MustCompile(`(?m)^ExecStart=/usr/local/bin/hdc-` + string(role) + `( |$)`).MatchString(unit) {
			t.Fatalf("%s does not start /usr/local/bin/hdc-%s", name, role)
		}
		// verify wants the programs: the ones deploy/build.sh built.
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(unit, "/usr/local/bin/", bin+"/")), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}

	verify := func(paths ...string) (string, error) {
		out, err := exec.Command(analyze, append([]string{"verify", "--man=no"}, paths...)...).CombinedOutput()
		return string(out), err
	}
	t.Run("verify", func(t *testing.T) {
		// A misspelt option is only a warning: any output fails.
		if out, err := verify(paths...); err != nil || out != "" {
			t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
		}
	})
	t.Run("verify reports a misspelt option", func(t *testing.T) {
		unit, err := os.ReadFile(paths[1])
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), systemdUnits[pki.Edge])
		bad := strings.Replace(string(unit), "[Service]\n", "[Service]\nProtectSytem=strict\n", 1)
		if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, _ := verify(p); !strings.Contains(out, "ProtectSytem") {
			t.Fatalf("systemd-analyze verify said %q of a misspelt option", out)
		}
	})

	// systemd-analyze security scores exposure from 0 (all hardened) to 10;
	// --threshold counts tenths. The units are at 1.1 and 1.4 on systemd
	// 252; a plain unit is at 9.6.
	const threshold = "--threshold=20"
	security := func(path string) (string, error) {
		out, err := exec.Command(analyze, "security", "--offline=yes", threshold, path).CombinedOutput()
		return string(out), err
	}
	for _, p := range paths {
		t.Run("security/"+filepath.Base(p), func(t *testing.T) {
			if out, err := security(p); err != nil {
				t.Fatalf("systemd-analyze security %s: %v\n%s", threshold, err, out)
			}
		})
	}
	t.Run("security/a plain unit fails", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "plain.service")
		if err := os.WriteFile(p, []byte("[Service]\nExecStart="+bin+"/hdc-backend\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := security(p); err == nil {
			t.Fatalf("a unit with no hardening passed %s:\n%s", threshold, out)
		}
	})

	t.Run("users", func(t *testing.T) {
		conf := readRepoFile(t, "deploy/systemd/hdc.sysusers.conf")
		for _, name := range systemdUnits {
			users := unitValues(readRepoFile(t, "deploy/systemd/"+name), "User")
			if len(users) != 1 || !regexp.MustCompile(`(?m)^u\s+`+regexp.QuoteMeta(users[0])+`\s`).MatchString(conf) {
				t.Errorf("%s runs as %q, which hdc.sysusers.conf does not declare", name, users)
			}
		}
		sysusers, err := exec.LookPath("systemd-sysusers")
		if err != nil {
			t.Skip("no systemd-sysusers to read hdc.sysusers.conf")
		}
		out, err := exec.Command(sysusers, "--root="+t.TempDir(), "--dry-run", filepath.Join(hdctest.RepoRoot, "deploy", "systemd", "hdc.sysusers.conf")).CombinedOutput()
		if err != nil || bytes.Contains(out, []byte("ignoring")) {
			t.Fatalf("systemd-sysusers --dry-run: %v\n%s", err, out)
		}
	})

	t.Run("hop files", func(t *testing.T) {
		for role, name := range systemdUnits {
			unit := readRepoFile(t, "deploy/systemd/"+name)
			var got []string
			for _, v := range unitValues(unit, "LoadCredential") {
				id, path, _ := strings.Cut(v, ":")
				if path != "/etc/hdc/tls/"+id && path != "/etc/hdc/"+id {
					t.Errorf("%s: LoadCredential=%s: want the file of the same name in /etc/hdc/tls or /etc/hdc", name, v)
				}
				got = append(got, id)
			}
			want := []string{pki.CAFile, pki.CertFile(role), pki.KeyFile(role)}
			if role == pki.Backend { // the edge holds no keeper: its keys are the backend's
				want = append(want, "keeper.key")
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s loads %q, want %q", name, got, want)
			}
			env := unitEnv(unit, name)
			for k, f := range map[string]string{"HDC_HOP_CA": want[0], "HDC_HOP_CERT": want[1], "HDC_HOP_KEY": want[2]} {
				if env[k] != "/run/credentials/"+name+"/"+f {
					t.Errorf("%s: %s=%s, want its credential %s", name, k, env[k], f)
				}
			}
			if want := "keyfile:///run/credentials/" + name + "/keeper.key"; role == pki.Backend && env["HDC_KEEPER"] != want {
				t.Errorf("%s: HDC_KEEPER=%s, want %s", name, env["HDC_KEEPER"], want)
			}
			if role == pki.Edge && env["HDC_KEEPER"] != "" {
				t.Errorf("%s: HDC_KEEPER=%s: the edge needs no keeper", name, env["HDC_KEEPER"])
			}
		}
	})

	t.Run("edge configuration", func(t *testing.T) {
		name := systemdUnits[pki.Edge]
		env := unitEnv(readRepoFile(t, "deploy/systemd/"+name), name)
		env["HDC_SITE"] = "api.example.org"
		config := adaptEdge(t, env)
		for _, want := range []string{"/run/credentials/hdc-edge.service/edge.pem", `"0.0.0.0:443"`} {
			if !strings.Contains(config, want) {
				t.Errorf("the unit's configuration does not have %s", want)
			}
		}
		// No registry file: the keys are the backend's, looked up over the hop.
		if env["HDC_KEY_REGISTRY"] != "" || !strings.Contains(config, `"backends":["https://127.0.0.1:9081"]`) {
			t.Errorf("the unit's edge reads its keys from %q, not the backend's key plane", env["HDC_KEY_REGISTRY"])
		}
	})
}

// The parts of the Compose file format deploy/compose.yaml uses. Decoding
// refuses any other key, so that a misspelt one fails here.
type (
	composeFile struct {
		Name     string                    `yaml:"name"`
		Services map[string]composeService `yaml:"services"`
		Networks map[string]struct {
			Internal bool `yaml:"internal"`
		} `yaml:"networks"`
		Volumes map[string]struct{} `yaml:"volumes"`
	}
	composeService struct {
		Build *struct {
			Context    string `yaml:"context"`
			Dockerfile string `yaml:"dockerfile"`
			Target     string `yaml:"target"`
		} `yaml:"build"`
		Image      string   `yaml:"image"`
		PullPolicy string   `yaml:"pull_policy"`
		Profiles   []string `yaml:"profiles"`
		Entrypoint []string `yaml:"entrypoint"`
		Restart    string   `yaml:"restart"`
		DependsOn  map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
		Sysctls     map[string]string `yaml:"sysctls"`
		Volumes     []composeMount    `yaml:"volumes"`
		Tmpfs       []string          `yaml:"tmpfs"`
		ReadOnly    bool              `yaml:"read_only"`
		CapDrop     []string          `yaml:"cap_drop"`
		SecurityOpt []string          `yaml:"security_opt"`
		Networks    []string          `yaml:"networks"`
		Healthcheck *struct {
			Test        []string `yaml:"test"`
			Interval    string   `yaml:"interval"`
			Timeout     string   `yaml:"timeout"`
			Retries     int      `yaml:"retries"`
			StartPeriod string   `yaml:"start_period"`
		} `yaml:"healthcheck"`
	}
	// composeMount is a volume entry, in the short syntax (source:target[:ro])
	// or the long one.
	composeMount struct {
		Type     string `yaml:"type"`
		Source   string `yaml:"source"`
		Target   string `yaml:"target"`
		ReadOnly bool   `yaml:"read_only"`
		Bind     *struct {
			CreateHostPath bool `yaml:"create_host_path"`
		} `yaml:"bind"`
	}
)

func (m *composeMount) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		f := strings.Split(n.Value, ":")
		if len(f) < 2 || len(f) > 3 || len(f) == 3 && f[2] != "ro" && f[2] != "rw" {
			return fmt.Errorf("line %d: volume %q: want source:target[:ro]", n.Line, n.Value)
		}
		m.Source, m.Target, m.ReadOnly = f[0], f[1], len(f) == 3 && f[2] == "ro"
		m.Type = "volume"
		if strings.HasPrefix(m.Source, ".") || strings.HasPrefix(m.Source, "/") {
			m.Type = "bind"
		}
		return nil
	}
	type long composeMount
	var l long
	if err := decodeStrict(n, &l); err != nil {
		return err
	}
	*m = composeMount(l)
	return nil
}

// decodeStrict decodes n into v, refusing unknown keys.
func decodeStrict(n *yaml.Node, v any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// TestDeployCompose holds deploy/compose.yaml to the Containerfile, to the
// hop's file names and to what it promises: the internal listener and the
// database unpublished, each side given its own hop files only, health
// checks that need no shell.
func TestDeployCompose(t *testing.T) {
	t.Parallel()
	src := readRepoFile(t, "deploy/compose.yaml")
	var c composeFile
	dec := yaml.NewDecoder(strings.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("deploy/compose.yaml: %v", err)
	}
	cf := parseContainerfile(t, "deploy/Containerfile")
	progs := buildPrograms(t)

	var names []string
	for name := range c.Services {
		names = append(names, name)
	}
	slices.Sort(names)
	if want := []string{"backend", "edge", "hdc", "postgres"}; !slices.Equal(names, want) {
		t.Fatalf("services %q, want %q", names, want)
	}
	// target returns the Containerfile target a service runs, or "".
	built := map[string]string{}
	for _, s := range c.Services {
		if s.Build != nil {
			built[s.Image] = s.Build.Target
		}
	}
	target := func(s composeService) string { return built[s.Image] }

	t.Run("builds", func(t *testing.T) {
		for name, s := range c.Services {
			if s.Build == nil {
				continue
			}
			if p := filepath.Join(hdctest.RepoRoot, "deploy", s.Build.Context, s.Build.Dockerfile); p != filepath.Join(hdctest.RepoRoot, "deploy", "Containerfile") {
				t.Errorf("%s builds %s, not deploy/Containerfile", name, p)
			}
			if cf.stage(s.Build.Target) == nil {
				t.Errorf("%s builds target %q, which the Containerfile does not have", name, s.Build.Target)
			}
		}
		if target(c.Services["hdc"]) == "" {
			t.Errorf("the service hdc runs %s, which no service builds", c.Services["hdc"].Image)
		}
	})

	t.Run("postgres pinned", func(t *testing.T) {
		if img := c.Services["postgres"].Image; !regexp.MustCompile(`^postgres:\d+\.\d+(-[a-z0-9.]+)?$`).MatchString(img) {
			t.Fatalf("postgres image %q: want a pinned minor release, postgres:MAJOR.MINOR", img)
		}
	})

	t.Run("published ports", func(t *testing.T) {
		for name, s := range c.Services {
			for _, p := range s.Ports {
				f := strings.Split(strings.TrimSuffix(strings.TrimSuffix(p, "/tcp"), "/udp"), ":")
				if name != "edge" || len(f) < 2 || f[len(f)-1] != "80" && f[len(f)-1] != "443" {
					t.Errorf("%s publishes %q: only the edge may, and only 80 and 443", name, p)
				}
			}
		}
	})

	t.Run("database network", func(t *testing.T) {
		for _, n := range c.Services["postgres"].Networks {
			if !c.Networks[n].Internal {
				t.Errorf("postgres is on network %s, which is not internal", n)
			}
		}
	})

	t.Run("health checks", func(t *testing.T) {
		for name, s := range c.Services {
			if len(s.Profiles) > 0 {
				continue
			}
			if s.Healthcheck == nil || len(s.Healthcheck.Test) < 2 {
				t.Errorf("%s has no health check", name)
				continue
			}
			if target(s) == "" {
				continue
			}
			// The image has no shell: CMD-SHELL cannot run.
			test := s.Healthcheck.Test
			if test[0] != "CMD" || !strings.HasPrefix(test[1], "/usr/local/bin/") || !slices.Contains(progs, strings.TrimPrefix(test[1], "/usr/local/bin/")) {
				t.Errorf("%s checks its health with %q: want CMD and a program of the image", name, test)
			}
		}
		for _, dep := range []struct{ service, on string }{{"backend", "postgres"}, {"edge", "backend"}} {
			if c.Services[dep.service].DependsOn[dep.on].Condition != "service_healthy" {
				t.Errorf("%s does not wait for %s to be healthy", dep.service, dep.on)
			}
		}
	})

	t.Run("hop and keeper files", func(t *testing.T) {
		for name, role := range map[string]pki.Role{"backend": pki.Backend, "edge": pki.Edge} {
			s := c.Services[name]
			env := cf.env(target(s))
			for k, v := range s.Environment {
				env[k] = v
			}
			want := map[string]string{
				env["HDC_HOP_CA"]:   pki.CAFile,
				env["HDC_HOP_CERT"]: pki.CertFile(role),
				env["HDC_HOP_KEY"]:  pki.KeyFile(role),
			}
			keeperFile, ok := strings.CutPrefix(os.Expand(env["HDC_KEEPER"], composeDefault), "keyfile://")
			switch {
			case role == pki.Backend && !ok:
				t.Errorf("%s: HDC_KEEPER=%s, want a key file by default", name, env["HDC_KEEPER"])
			case role == pki.Backend:
				want[keeperFile] = "keeper.key"
			case env["HDC_KEEPER"] != "":
				t.Errorf("%s: HDC_KEEPER=%s: the edge needs no keeper, its keys are the backend's", name, env["HDC_KEEPER"])
			}
			got := map[string]string{}
			for _, m := range s.Volumes {
				if m.Type != "bind" {
					continue
				}
				if !m.ReadOnly || m.Bind == nil || m.Bind.CreateHostPath {
					t.Errorf("%s mounts %s: want it read-only, and no directory made where the file is missing", name, m.Source)
				}
				got[m.Target] = filepath.Base(m.Source)
			}
			if len(got) != len(want) {
				t.Errorf("%s mounts %v, want only %v", name, got, want)
			}
			for path, file := range want {
				if got[path] != file {
					t.Errorf("%s: %s is %q, want the hop's %s", name, path, got[path], file)
				}
			}
		}
	})

	t.Run("keys in the database", func(t *testing.T) {
		edge := cf.env("edge")
		for k, v := range c.Services["edge"].Environment {
			edge[k] = v
		}
		// The value given when deploy/.env names none: compose's ${VAR:-default}.
		internal := regexp.MustCompile(`^\$\{HDC_BACKEND_INTERNAL:-(.*)\}$`).ReplaceAllString(edge["HDC_BACKEND_INTERNAL"], "$1")
		if edge["HDC_KEY_REGISTRY"] != "" || internal != "https://backend:9081" {
			t.Errorf("the edge reads its keys from %q, not the key plane of the backend at https://backend:9081 (%q)",
				edge["HDC_KEY_REGISTRY"], edge["HDC_BACKEND_INTERNAL"])
		}
		if ops := c.Services["hdc"].Environment["HDC_DATABASE_URL"]; ops == "" || ops != c.Services["backend"].Environment["HDC_DATABASE_URL"] {
			t.Errorf("the service hdc changes keys in %q, not the backend's database", ops)
		}
		if registry := cf.env("backend")["HDC_KEY_REGISTRY"]; registry != "" {
			t.Errorf("the image's hdc writes a registry file, %s", registry)
		}
	})

	t.Run("docker compose config", func(t *testing.T) {
		if exec.Command("docker", "compose", "version").Run() != nil {
			t.Skip("no docker compose here (the Docker CLI's compose plugin)")
		}
		cmd := exec.Command("docker", "compose", "--file", filepath.Join(hdctest.RepoRoot, "deploy", "compose.yaml"), "config", "--quiet")
		cmd.Env = append(os.Environ(), "HDC_SITE=api.example.org", "HDC_POSTGRES_PASSWORD=0123456789abcdef")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("docker compose config: %v\n%s", err, out)
		}
	})
}

// TestDeployEnvironmentNames: every HDC_* variable the deployment files set
// is one the programs or the reference Caddyfile read, so that a misspelt
// name cannot be silently ignored.
func TestDeployEnvironmentNames(t *testing.T) {
	t.Parallel()
	known := map[string]bool{}
	quoted := regexp.MustCompile(`"(HDC_[A-Z0-9_]+)"`)
	err := filepath.WalkDir(hdctest.RepoRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "tests" || strings.HasPrefix(d.Name(), ".") && path != hdctest.RepoRoot) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range quoted.FindAllSubmatch(b, -1) {
			known[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// {$X} is read when the Caddyfile is adapted, {env.X} when the edge starts.
	for _, m := range regexp.MustCompile(`\{(?:\$|env\.)(HDC_[A-Z0-9_]+)`).FindAllStringSubmatch(readRepoFile(t, "Caddyfile"), -1) {
		known[m[1]] = true
	}

	set := map[string][]string{} // variable → the files that set it
	add := func(file string, names ...string) {
		for _, n := range names {
			if strings.HasPrefix(n, "HDC_") && !slices.Contains(set[n], file) {
				set[n] = append(set[n], file)
			}
		}
	}
	cf := parseContainerfile(t, "deploy/Containerfile")
	for _, s := range cf.stages {
		for k := range cf.env(s.name) {
			add("deploy/Containerfile", k)
		}
	}
	var c composeFile
	if err := yaml.Unmarshal([]byte(readRepoFile(t, "deploy/compose.yaml")), &c); err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Services {
		for k := range s.Environment {
			add("deploy/compose.yaml", k)
		}
	}
	assignment := regexp.MustCompile(`(?m)^#?(?:Environment=)?(HDC_[A-Z0-9_]+)=`)
	for _, f := range []string{"hdc-backend.service", "hdc-edge.service", "backend.env.example", "edge.env.example"} {
		file := "deploy/systemd/" + f
		text := readRepoFile(t, file)
		for _, m := range assignment.FindAllStringSubmatch(text, -1) {
			add(file, m[1])
		}
		for _, v := range unitValues(text, "Environment") {
			for _, kv := range strings.Fields(v) {
				k, _, _ := strings.Cut(kv, "=")
				add(file, k)
			}
		}
	}
	if len(set) < 10 {
		t.Fatalf("found only %d variables in the deployment files: %v", len(set), set)
	}
	for name, files := range set {
		if !known[name] {
			t.Errorf("%s, set in %s, is read by no program and not by the Caddyfile", name, strings.Join(files, ", "))
		}
	}
}

// composeDefault expands a Compose interpolation ${NAME:-default} to its
// default, as Compose does when NAME is not set.
func composeDefault(expr string) string {
	_, def, _ := strings.Cut(expr, ":-")
	return def
}
