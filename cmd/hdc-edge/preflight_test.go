package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/internal/pki"
	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

func TestCheckConfig(t *testing.T) {
	dir := t.TempDir()
	hop, other := filepath.Join(dir, "tls"), filepath.Join(dir, "other")
	for _, d := range []string{hop, other} {
		if err := pki.InitDir(d, time.Hour, false); err != nil {
			t.Fatal(err)
		}
	}
	registry := filepath.Join(dir, "keys.json")
	keeperURL := testkit.KeeperURL()
	k, err := keeper.Open(t.Context(), keeperURL)
	if err != nil {
		t.Fatal(err)
	}
	if err := registryfile.Update(registry, registryfile.NewSealer(k), func(f *registryfile.File) error {
		_, err := f.Add("c1", "", "", "", false, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	in := func(d, f string) string { return filepath.Join(d, f) }
	edgeCert, edgeKey := in(hop, pki.CertFile(pki.Edge)), in(hop, pki.KeyFile(pki.Edge))
	configWith := func(registry, keeperURL, cert, key, ca string) string {
		proxy := `{"handler":"reverse_proxy","upstreams":[{"dial":"127.0.0.1:9081"}]}`
		if cert != "" {
			proxy += fmt.Sprintf(`,{"handler":"reverse_proxy","transport":{"protocol":"http","tls":{"client_certificate_file":%q,"client_certificate_key_file":%q,"ca":{"provider":"file","pem_files":[%q]}}}}`, cert, key, ca)
		}
		return fmt.Sprintf(`{"apps":{"hdc":{"keys":{"registry":%q,"keeper":%q}},"http":{"servers":{"srv0":{"routes":[{"handle":[{"handler":"subroute","routes":[{"handle":[%s]}]}]}]}}}}}`, registry, keeperURL, proxy)
	}
	config := func(registry, cert, key, ca string) string { return configWith(registry, keeperURL, cert, key, ca) }
	sound := config(registry, edgeCert, edgeKey, in(hop, pki.CAFile))
	withLimits := func(cfg, limits string) string {
		return strings.Replace(cfg, `"hdc":{`, `"hdc":{"rate_limits":`+limits+`,`, 1)
	}
	tests := []struct {
		name, config, want string
	}{
		{"sound", config(registry, edgeCert, edgeKey, in(hop, pki.CAFile)), ""},
		{"not our app", `{"apps":{"http":{}}}`, ""},
		{"no registry file", config(filepath.Join(dir, "none.json"), edgeCert, edgeKey, in(hop, pki.CAFile)), "does not exist: add the first key with `hdc keys add"},
		{"a registry that is not one", config(garbage, edgeCert, edgeKey, in(hop, pki.CAFile)), "the key registry " + garbage},
		{"the keeper in the environment", configWith(registry, "{env.HDC_TEST_KEEPER}", edgeCert, edgeKey, in(hop, pki.CAFile)), ""},
		{"no keeper", configWith(registry, "", edgeCert, edgeKey, in(hop, pki.CAFile)), "configure the keeper (HDC_KEEPER)"},
		{"another keeper", configWith(registry, testkit.KeeperURL(), edgeCert, edgeKey, in(hop, pki.CAFile)), "cannot unwrap the data key"},
		{"a keeper that does not open", configWith(registry, "base64key://short", edgeCert, edgeKey, in(hop, pki.CAFile)), "the keeper (HDC_KEEPER in the reference Caddyfile): base64key"},
		{"no hop", config(registry, "", "", ""), "no route reaches the backend over the hop's mutual TLS"},
		{"missing certificate", config(registry, in(dir, "edge.pem"), edgeKey, in(hop, pki.CAFile)), "HDC_HOP_CERT"},
		{"the backend's certificate", config(registry, in(hop, pki.CertFile(pki.Backend)), in(hop, pki.KeyFile(pki.Backend)), in(hop, pki.CAFile)), `is not an edge's (it is "hdc-backend"'s)`},
		{"another authority", config(registry, edgeCert, edgeKey, in(other, pki.CAFile)), "does not verify"},
		{"missing CA", config(registry, edgeCert, edgeKey, in(dir, "ca.pem")), "HDC_HOP_CA"},
		{"a Redis without a password off this host", withLimits(sound, `{"redis":"redis://10.0.0.31:6379/0"}`),
			"rate_limits: redis: the Redis at 10.0.0.31:6379 has no password"},
		{"a Redis without a password, allowed", withLimits(sound, `{"redis":"redis://10.0.0.31:6379/0","redis_allow_unauthenticated":true}`), ""},
		{"a Redis password from the environment", withLimits(sound, `{"redis":"redis://hdc-edge@10.0.0.31:6379/0","redis_password":"{env.HDC_TEST_REDIS_PW}"}`), ""},
		{"a Redis password written", withLimits(sound, `{"redis":"redis://hdc-edge@10.0.0.31:6379/0","redis_password":"hunter2-written"}`),
			"redis_password is written in the configuration"},
		{"a Redis password in the URL", withLimits(sound, `{"redis":"redis://hdc-edge:hunter2-in-url@127.0.0.1:6379/0"}`), "the URL holds a password"},
	}
	t.Setenv("HDC_TEST_REDIS_PW", "hunter2-from-the-environment")
	t.Setenv("HDC_TEST_KEEPER", keeperURL)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkConfig([]byte(tt.config))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err = %v, want one naming %q", err, tt.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("the error is not one line: %v", err)
			case err != nil && strings.Contains(err.Error(), "hunter2"):
				t.Fatalf("the error shows a password: %v", err)
			}
		})
	}
}

func TestPreflightSkips(t *testing.T) {
	for _, args := range [][]string{nil, {"version"}, {"adapt", "--config", "/nonexistent"}, {"run", "--envfile", "x", "--config", "/nonexistent"}, {"run", "--resume"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if err := preflight(args); err != nil {
				t.Fatalf("preflight(%q) = %v", args, err)
			}
		})
	}
}
