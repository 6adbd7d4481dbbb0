package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/spf13/pflag"

	"github.com/health-data-connect/hdc/caddymodule/edge"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/keeper"
	"github.com/health-data-connect/hdc/kid-registry/registryfile"
)

// preflight checks the configuration `hdc-edge run` is about to load for
// the operator's mistakes that Caddy would report at the end of a long
// provisioning chain (a key registry that is not there), or not at all (a
// hop certificate that is not the edge's, which the backend answers with
// 403 untrusted_source on every request). It returns nil for any other
// command, and for a run whose configuration it cannot see as Caddy will:
// one with --envfile (Caddy's own parser sets those variables) or
// --resume. The modules still refuse what they refuse.
func preflight(args []string) error {
	if len(args) == 0 || args[0] != "run" {
		return nil
	}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	fs.SetOutput(discard{})
	config := fs.StringP("config", "c", "", "")
	adapter := fs.StringP("adapter", "a", "", "")
	envfile := fs.StringSlice("envfile", nil, "")
	resume := fs.Bool("resume", false, "")
	if err := fs.Parse(args[1:]); err != nil || len(*envfile) > 0 || *resume {
		return nil // Caddy reports its own flag errors
	}
	cfgJSON, ok := adapt(*config, *adapter)
	if !ok {
		return nil // Caddy reports it, with the file's line
	}
	return checkConfig(cfgJSON)
}

// adapt reads and adapts the configuration as `caddy run` does (without
// logging that it did: Caddy will), and reports whether it could.
func adapt(config, adapter string) ([]byte, bool) {
	if config == "" {
		config = "Caddyfile" // Caddy's default, in the working directory
	}
	body, err := os.ReadFile(config)
	if err != nil {
		return nil, false
	}
	base := strings.ToLower(filepath.Base(config))
	if adapter == "" && (strings.HasPrefix(base, "caddyfile") || strings.HasSuffix(base, ".caddyfile")) {
		adapter = "caddyfile"
	}
	if adapter == "" {
		return body, true
	}
	a := caddyconfig.GetAdapter(adapter)
	if a == nil {
		return nil, false
	}
	out, _, err := a.Adapt(body, map[string]any{"filename": config})
	return out, err == nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// edgeConfig is what preflight reads of an adapted configuration.
type edgeConfig struct {
	Apps struct {
		HDC *struct {
			Keys struct {
				Registry string `json:"registry"`
				Keeper   string `json:"keeper"`
			} `json:"keys"`
			RateLimits edge.RateLimitConfig `json:"rate_limits"`
		} `json:"hdc"`
		HTTP json.RawMessage `json:"http"`
	} `json:"apps"`
}

// checkConfig checks an adapted configuration that has the hdc app: its
// key registry, the Redis of its rate limits, and the hop's mutual TLS of
// every reverse proxy that presents a client certificate, of which there
// must be one.
func checkConfig(cfgJSON []byte) error {
	var cfg edgeConfig
	if err := json.Unmarshal(cfgJSON, &cfg); err != nil || cfg.Apps.HDC == nil {
		return nil
	}
	keys, repl := cfg.Apps.HDC.Keys, caddy.NewReplacer()
	if err := checkRegistry(repl.ReplaceAll(keys.Registry, ""), repl.ReplaceAll(keys.Keeper, "")); err != nil {
		return err
	}
	if _, err := cfg.Apps.HDC.RateLimits.RedisOptions(repl); err != nil {
		return err
	}
	var http any
	if err := json.Unmarshal(cfg.Apps.HTTP, &http); err != nil {
		return nil
	}
	hops := hopTransports(http, nil)
	if len(hops) == 0 {
		return errors.New("no route reaches the backend over the hop's mutual TLS, which the backend requires: " +
			"give the reverse proxy the edge's certificate, key and the hop's authority (the reference Caddyfile " +
			"reads HDC_HOP_CERT, HDC_HOP_KEY and HDC_HOP_CA; hdc tls init makes the files)")
	}
	for _, h := range hops {
		if err := h.check(); err != nil {
			return err
		}
	}
	return nil
}

// checkRegistry checks that the keeper at keeperURL opens (when one is
// configured) and that the key registry is there and valid, its secrets
// opened with the keeper.
func checkRegistry(path, keeperURL string) error {
	if path == "" {
		return nil // the keys are the backend's, or the hdc app refuses the config with a clear error of its own
	}
	var sealer *registryfile.Sealer
	if keeperURL != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		k, err := keeper.Open(ctx, keeperURL)
		if err != nil {
			return fmt.Errorf("the keeper (HDC_KEEPER in the reference Caddyfile): %v", err)
		}
		defer k.Close()
		sealer = registryfile.NewSealer(k)
	}
	_, err := registryfile.Load(path, sealer)
	switch {
	case errors.Is(err, registryfile.ErrNoKeeper), errors.Is(err, keeper.ErrUnwrap):
		return fmt.Errorf("the key registry %s: %v (the reference Caddyfile reads the keeper's URL from HDC_KEEPER)", path, err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the key registry %s does not exist: add the first key with "+
			"`hdc keys add --client <client id> --registry %s` (the reference Caddyfile reads its path from HDC_KEY_REGISTRY)", path, path)
	case err != nil:
		return fmt.Errorf("the key registry %s: %v", path, err)
	}
	return nil
}

// hopTLS is the TLS of a reverse proxy's transport that presents a client
// certificate: the edge's side of the hop.
type hopTLS struct {
	Cert   string   `json:"client_certificate_file"`
	Key    string   `json:"client_certificate_key_file"`
	RootCA []string `json:"root_ca_pem_files"`
	CA     *struct {
		Provider string   `json:"provider"`
		Files    []string `json:"pem_files"`
	} `json:"ca"`
}

// hopTransports collects, depth first, the TLS of every reverse_proxy
// handler in v that presents a client certificate.
func hopTransports(v any, out []hopTLS) []hopTLS {
	switch v := v.(type) {
	case map[string]any:
		if v["handler"] == "reverse_proxy" {
			if t, ok := v["transport"].(map[string]any); ok && t["tls"] != nil {
				b, _ := json.Marshal(t["tls"])
				var h hopTLS
				if json.Unmarshal(b, &h) == nil && h.Cert != "" {
					out = append(out, h)
				}
			}
		}
		for _, e := range v {
			out = hopTransports(e, out)
		}
	case []any:
		for _, e := range v {
			out = hopTransports(e, out)
		}
	}
	return out
}

// check loads the hop's files and checks that the certificate is an
// edge's, issued by the authority the edge trusts, as the backend will.
func (h hopTLS) check() error {
	pair, err := tls.LoadX509KeyPair(h.Cert, h.Key)
	if err != nil {
		return fmt.Errorf("the hop's certificate %s and key %s (HDC_HOP_CERT, HDC_HOP_KEY in the reference Caddyfile): %v", h.Cert, h.Key, err)
	}
	files := h.RootCA
	if h.CA != nil && h.CA.Provider == "file" {
		files = append(files, h.CA.Files...)
	}
	if len(files) == 0 {
		return errors.New("the reverse proxy to the backend trusts no hop authority: name its CA file (HDC_HOP_CA in the reference Caddyfile)")
	}
	roots := x509.NewCertPool()
	for _, f := range files {
		pem, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("the hop's CA certificate (HDC_HOP_CA in the reference Caddyfile): %v", err)
		}
		if !roots.AppendCertsFromPEM(pem) {
			return fmt.Errorf("the hop's CA certificate %s (HDC_HOP_CA in the reference Caddyfile) holds no PEM certificate", f)
		}
	}
	leaf := pair.Leaf
	if !contract.NamesRole(leaf, contract.RoleEdge) {
		return fmt.Errorf("the hop's certificate %s is not an edge's (it is %q's): the backend would refuse every request; "+
			"use the edge's (hdc tls init makes edge.pem and edge-key.pem)", h.Cert, leaf.Subject.CommonName)
	}
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return fmt.Errorf("the hop's certificate %s does not verify against %v (HDC_HOP_CA in the reference Caddyfile): %v", h.Cert, files, err)
	}
	return nil
}
