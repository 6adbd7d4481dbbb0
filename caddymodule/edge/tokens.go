package edge

import (
	"errors"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/caddymodule/tokenauth"
	"github.com/health-data-connect/hdc/internal/contract"
)

// TokensConfig configures the verification of bearer tokens: the backend's
// signing keys (a JWKS by URL or from a file) and the claims to expect.
// Placeholders such as {env.X} are replaced in the strings.
type TokensConfig struct {
	// JWKSURL is where the backend publishes its signing keys.
	JWKSURL string `json:"jwks_url,omitempty"`
	// JWKSBackends are the backends' internal listeners, instead of
	// JWKSURL: the JWKS is read from the one that answered last
	// (contract.PathJWKS), and from the next when it does not answer.
	JWKSBackends []string `json:"jwks_backends,omitempty"`
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

// verifier builds the verifier when tokens are configured, nil when they
// are not.
func (c *TokensConfig) verifier(repl *caddy.Replacer, logger *zap.Logger) (*tokenauth.Verifier, error) {
	keys, err := c.keySource(repl, logger)
	if err != nil || keys == nil {
		return nil, err // with no token checks configured, hdc_auth will refuse to provision
	}
	return tokenauth.NewVerifier(keys, tokenauth.VerifierOptions{
		Issuer:       repl.ReplaceAll(c.Issuer, ""),
		Audience:     repl.ReplaceAll(c.Audience, ""),
		Leeway:       time.Duration(c.Leeway),
		RefreshGrace: time.Duration(c.RefreshWindow),
		CacheSize:    c.CacheSize,
		CacheMaxAge:  time.Duration(c.CacheMaxAge),
		ObserveCache: observeTokenCache,
	})
}

// observeTokenCache counts a look-up in the cache of verified tokens.
func observeTokenCache(hit bool) {
	if hit {
		Metrics.tokenHits.Inc()
	} else {
		Metrics.tokenMisses.Inc()
	}
}

// keySource returns the source of the signing keys configured, nil when
// none is.
func (c *TokensConfig) keySource(repl *caddy.Replacer, logger *zap.Logger) (tokenauth.KeySource, error) {
	url, file, backends := repl.ReplaceAll(c.JWKSURL, ""), repl.ReplaceAll(c.JWKSFile, ""), backendURLs(repl, c.JWKSBackends)
	given := 0
	for _, set := range []bool{url != "", file != "", len(backends) > 0} {
		if set {
			given++
		}
	}
	if given > 1 {
		return nil, errors.New("hdc: tokens: jwks_url, jwks_backend and jwks_file exclude each other")
	}
	var client *http.Client
	var err error
	switch {
	case file != "":
		return tokenauth.NewFileKeySource(file, tokenauth.FileOptions{Logger: logger})
	case len(backends) > 0:
		url, client, err = c.backends(repl, "tokens", backends, contract.PathJWKS)
	case url != "":
		client, err = c.client(repl, "tokens")
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return tokenauth.NewRemoteKeySource(url, tokenauth.RemoteOptions{
		Cooldown: time.Duration(c.RefreshCooldown), Logger: logger, Client: client})
}
