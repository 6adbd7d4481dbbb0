package caddymodule

import (
	"errors"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/health-data-connect/hdc/caddymodule/tokenauth"
)

// TokensConfig configures the verification of bearer tokens: the backend's
// signing keys (a JWKS by URL or from a file) and the claims to expect.
// Placeholders such as {env.X} are replaced in the strings.
type TokensConfig struct {
	// JWKSURL is where the backend publishes its signing keys.
	JWKSURL string `json:"jwks_url,omitempty"`
	// JWKSFile is a local JWKS, instead of JWKSURL.
	JWKSFile string `json:"jwks_file,omitempty"`
	// Issuer and Audience are the required iss and aud.
	Issuer   string `json:"issuer,omitempty"`
	Audience string `json:"audience,omitempty"`
	// Leeway is the clock skew allowed on exp and nbf (default 30s, at most 60s).
	Leeway caddy.Duration `json:"leeway,omitempty"`
	// RefreshCooldown is the least time between two fetches of the JWKS URL
	// caused by unknown kids (default 30s).
	RefreshCooldown caddy.Duration `json:"refresh_cooldown,omitempty"`
	// CacheSize bounds the cache of verified tokens (default 10000; -1 disables it).
	CacheSize int `json:"cache_size,omitempty"`
	// CacheMaxAge is how long a verified token is trusted without a new
	// check (default 1m): the bound on how late a revoked signing key is noticed.
	CacheMaxAge caddy.Duration `json:"cache_max_age,omitempty"`
	// RefreshWindow is how long after expiry an access token is still
	// accepted on the refresh route (default 30 days, the refresh token's lifetime).
	RefreshWindow caddy.Duration `json:"refresh_window,omitempty"`
	// HopTLS is the TLS of a jwks_url over https, the backend's
	// internal listener.
	HopTLS
}

// provisionTokens builds the verifier when tokens are configured.
func (a *App) provisionTokens(ctx caddy.Context) error {
	c := a.Tokens
	repl := caddy.NewReplacer()
	url, file := repl.ReplaceAll(c.JWKSURL, ""), repl.ReplaceAll(c.JWKSFile, "")
	var (
		keys tokenauth.KeySource
		err  error
	)
	logger := a.logger.Named("tokens")
	switch {
	case url != "" && file != "":
		return errors.New("hdc: tokens: jwks_url and jwks_file exclude each other")
	case url != "":
		var client *http.Client
		if client, err = c.client(repl, "tokens"); err != nil {
			return err
		}
		keys, err = tokenauth.NewRemoteKeySource(url, tokenauth.RemoteOptions{
			Cooldown: time.Duration(c.RefreshCooldown), Logger: logger, Client: client})
	case file != "":
		keys, err = tokenauth.NewFileKeySource(file, tokenauth.FileOptions{Logger: logger})
	default:
		return nil // no token checks configured; hdc_auth will refuse to provision
	}
	if err != nil {
		return err
	}
	a.verifier, err = tokenauth.NewVerifier(keys, tokenauth.VerifierOptions{
		Issuer:       repl.ReplaceAll(c.Issuer, ""),
		Audience:     repl.ReplaceAll(c.Audience, ""),
		Leeway:       time.Duration(c.Leeway),
		RefreshGrace: time.Duration(c.RefreshWindow),
		CacheSize:    c.CacheSize,
		CacheMaxAge:  time.Duration(c.CacheMaxAge),
	})
	return err
}
