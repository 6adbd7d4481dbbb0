package tokenauth

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/golang-jwt/jwt/v5"

	"github.com/health-data-connect/hdc/internal/contract"
)

// Defaults and limits of VerifierOptions. DefaultIssuer and DefaultAudience
// are the values the backend uses unless configured otherwise.
const (
	DefaultIssuer       = "health-data-connect"
	DefaultAudience     = "health-data-connect-api"
	DefaultLeeway       = 30 * time.Second
	MaxLeeway           = 60 * time.Second
	DefaultRefreshGrace = 30 * 24 * time.Hour
	DefaultCacheSize    = 10000
	DefaultCacheMaxAge  = time.Minute
)

// MaxTokenSize bounds the length of a token; longer ones are refused before
// any parsing. The backend's tokens are a few hundred bytes.
const MaxTokenSize = 8 << 10

// Mode says what a token is presented for.
type Mode int

const (
	// ModeAccess checks a token presented to use the API: it must be valid
	// now. Verified access tokens are cached.
	ModeAccess Mode = iota
	// ModeRefresh checks the access token presented along with a refresh
	// request: it may have expired, but not longer ago than the refresh
	// grace; everything else is checked as for ModeAccess. The cache is
	// neither read nor written.
	ModeRefresh
)

// String returns "access" or "refresh", for logs and metric labels.
func (m Mode) String() string {
	if m == ModeRefresh {
		return "refresh"
	}
	return "access"
}

// Claims are the verified contents of a token.
type Claims struct {
	Subject   string    // sub: the client id
	Workspace string    // ws: the workspace id
	Grant     string    // grant: the sharing grant that opened ws, or ""
	Session   string    // sid: the login the token was issued for, or "" (older tokens)
	ID        string    // jti: the token id
	Issuer    string    // iss
	Audience  []string  // aud, as one or more values
	IssuedAt  time.Time // iat; zero if the token has none
	NotBefore time.Time // nbf; zero if the token has none
	ExpiresAt time.Time // exp
	KeyID     string    // kid of the header: the signing key
}

// VerifierOptions configure a Verifier. Zero fields take the defaults.
type VerifierOptions struct {
	// Issuer is the required iss. Default DefaultIssuer.
	Issuer string
	// Audience must be the aud, or one of its values. Default
	// DefaultAudience.
	Audience string
	// Leeway is the clock skew allowed on exp, nbf and iat: at most
	// MaxLeeway. Default DefaultLeeway.
	Leeway time.Duration
	// RefreshGrace is how long after its exp a token is still accepted by
	// ModeRefresh; it matches the backend's refresh_expires_in. Default
	// DefaultRefreshGrace.
	RefreshGrace time.Duration
	// CacheSize is the number of verified access tokens remembered. Default
	// DefaultCacheSize; negative disables the cache.
	CacheSize int
	// CacheMaxAge is the longest a verified token is remembered (never past
	// its exp). Default DefaultCacheMaxAge.
	CacheMaxAge time.Duration
	// ObserveCache, if set, is told of every access token looked up in the
	// cache: whether its claims were served from it (a hit) or the token
	// was verified (a miss), for metrics. Concurrent verifications call it
	// concurrently.
	ObserveCache func(hit bool)
	// Now returns the current time. Nil means time.Now; tests set a clock.
	Now func() time.Time
}

// Verifier checks bearer tokens. It is safe for concurrent use.
type Verifier struct {
	keys      KeySource
	parser    *jwt.Parser
	validator *jwt.Validator
	grace     time.Duration
	now       func() time.Time
	cache     *cache // nil when disabled
	observe   func(hit bool)
}

// NewVerifier returns a Verifier that checks tokens with the keys of keys.
func NewVerifier(keys KeySource, opts VerifierOptions) (*Verifier, error) {
	if keys == nil {
		return nil, errors.New("tokenauth: no key source")
	}
	if opts.Leeway < 0 || opts.Leeway > MaxLeeway {
		return nil, fmt.Errorf("tokenauth: leeway must be between 0 and %s", MaxLeeway)
	}
	if opts.RefreshGrace < 0 || opts.CacheMaxAge < 0 {
		return nil, errors.New("tokenauth: negative refresh grace or cache max age")
	}
	v := &Verifier{
		keys:    keys,
		grace:   cmp.Or(opts.RefreshGrace, DefaultRefreshGrace),
		now:     opts.Now,
		observe: opts.ObserveCache,
	}
	if v.now == nil {
		v.now = time.Now
	}
	if v.observe == nil {
		v.observe = func(bool) {}
	}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithStrictDecoding(),
		jwt.WithoutClaimsValidation(), // done by v.validator, which knows the mode
	)
	v.validator = jwt.NewValidator(
		jwt.WithIssuer(cmp.Or(opts.Issuer, DefaultIssuer)),
		jwt.WithAudience(cmp.Or(opts.Audience, DefaultAudience)),
		jwt.WithLeeway(cmp.Or(opts.Leeway, DefaultLeeway)),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(v.now),
	)
	if opts.CacheSize >= 0 {
		v.cache = newCache(cmp.Or(opts.CacheSize, DefaultCacheSize), cmp.Or(opts.CacheMaxAge, DefaultCacheMaxAge))
	}
	return v, nil
}

// Verify checks token (without the "Bearer " prefix) for mode and returns
// its claims. Every error is, or wraps, one of the package's *Error values.
// Modes other than ModeRefresh are checked as ModeAccess. ctx bounds the
// wait for the key source when it has to fetch keys.
//
// An access token found in the cache is not verified again, but its kid
// must still name the same key in the key source: when a refresh of the set
// drops or replaces the key, the token's entry is dropped at its next use
// and the token verified afresh (and refused).
func (v *Verifier) Verify(ctx context.Context, token string, mode Mode) (*Claims, error) {
	if token == "" {
		return nil, ErrMissing
	}
	if len(token) > MaxTokenSize {
		return nil, detail(ErrMalformed, "token longer than %d bytes", MaxTokenSize)
	}
	if mode == ModeRefresh || v.cache == nil {
		c, _, err := v.verify(ctx, token, mode)
		return c, err
	}
	// Hashed where it lies: []byte(token) would copy the token (a third
	// of a kilobyte a request), and Sum256 only reads what it is given.
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(token), len(token)))
	if e, ok := v.cache.get(sum, v.now()); ok {
		if k, err := v.keys.Key(ctx, e.claims.KeyID); err == nil && k.Equal(e.key) {
			v.observe(true)
			return e.claims.clone(), nil
		}
		v.cache.remove(sum)
	}
	v.observe(false)
	c, key, err := v.verify(ctx, token, mode)
	if err != nil {
		return nil, err
	}
	v.cache.put(sum, c.clone(), key, v.now())
	return c, nil
}

// verify checks the token's signature and claims, and returns the claims
// and the key that verified them.
func (v *Verifier) verify(ctx context.Context, token string, mode Mode) (*Claims, ed25519.PublicKey, error) {
	var (
		tc     tokenClaims
		kid    string
		key    ed25519.PublicKey
		keyErr error
	)
	_, err := v.parser.ParseWithClaims(token, &tc, func(t *jwt.Token) (any, error) {
		kid, _ = t.Header["kid"].(string)
		switch {
		case kid == "":
			keyErr = detail(ErrMalformed, "no kid in the header")
		case t.Header["crit"] != nil:
			keyErr = detail(ErrMalformed, "critical header parameters are not supported")
		default:
			key, keyErr = v.keys.Key(ctx, kid)
			if keyErr != nil && !errors.As(keyErr, new(*Error)) {
				keyErr = fmt.Errorf("%w: %w", ErrKeysUnavailable, keyErr)
			}
		}
		return key, keyErr
	})
	switch {
	case keyErr != nil:
		return nil, nil, keyErr
	case errors.Is(err, jwt.ErrEd25519Verification):
		return nil, nil, detail(ErrBadSignature, "signature does not verify")
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return nil, nil, detail(ErrBadSignature, "algorithm is not EdDSA")
	case err != nil:
		// jwt's message may quote a character of the token; ours does not.
		return nil, nil, ErrMalformed
	}
	if err := v.checkClaims(&tc, mode); err != nil {
		return nil, nil, err
	}
	return tc.claims(kid), key, nil
}

// checkClaims checks the claims of a token whose signature verified.
func (v *Verifier) checkClaims(tc *tokenClaims, mode Mode) error {
	if name := tc.missing(); name != "" {
		return detail(ErrClaims, "missing %s", name)
	}
	var claims jwt.Claims = tc
	if mode == ModeRefresh {
		claims = expiryHidden{tc}
	}
	if err := v.validator.Validate(claims); err != nil {
		return validationError(err)
	}
	if mode == ModeRefresh && !v.now().Before(tc.ExpiresAt.Add(v.grace)) {
		return detail(ErrExpired, "expired more than %s ago", v.grace)
	}
	return nil
}

// validationError translates the errors of jwt.Validator, most significant
// first: a token meant for someone else before a token out of its time.
func validationError(err error) error {
	switch {
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return detail(ErrClaims, "wrong issuer")
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return detail(ErrClaims, "wrong audience")
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return detail(ErrClaims, "empty aud")
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return detail(ErrNotYetValid, "nbf is in the future")
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return detail(ErrNotYetValid, "iat is in the future")
	case errors.Is(err, jwt.ErrTokenExpired):
		return ErrExpired
	default:
		return ErrMalformed
	}
}

// tokenClaims is the payload of an access token: the registered claims,
// and the backend's own, named in internal/contract.
type tokenClaims struct {
	jwt.RegisteredClaims
	contract.TokenClaims
}

// missing returns the name of the first required claim that is absent or
// empty, or "".
func (tc *tokenClaims) missing() string {
	switch {
	case tc.Issuer == "":
		return "iss"
	case len(tc.Audience) == 0:
		return "aud"
	case tc.Subject == "":
		return "sub"
	case tc.Workspace == "":
		return contract.ClaimWorkspace
	case tc.ID == "":
		return "jti"
	case tc.ExpiresAt == nil:
		return "exp"
	}
	return ""
}

// claims returns the verified claims of a token signed by kid.
func (tc *tokenClaims) claims(kid string) *Claims {
	return &Claims{
		Subject:   tc.Subject,
		Workspace: tc.Workspace,
		Grant:     tc.Grant,
		Session:   tc.Session,
		ID:        tc.ID,
		Issuer:    tc.Issuer,
		Audience:  tc.Audience,
		IssuedAt:  numericTime(tc.IssuedAt),
		NotBefore: numericTime(tc.NotBefore),
		ExpiresAt: numericTime(tc.ExpiresAt),
		KeyID:     kid,
	}
}

func numericTime(d *jwt.NumericDate) time.Time {
	if d == nil {
		return time.Time{}
	}
	return d.Time
}

// expiryHidden presents a token's claims to jwt.Validator without exp, so
// that ModeRefresh checks everything else with the same validator and
// checks exp against the refresh grace itself.
type expiryHidden struct{ *tokenClaims }

func (expiryHidden) GetExpirationTime() (*jwt.NumericDate, error) { return nil, nil }

// clone returns a copy of c that shares nothing with it.
func (c *Claims) clone() *Claims {
	d := *c
	d.Audience = slices.Clone(c.Audience)
	return &d
}
