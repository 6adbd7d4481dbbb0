package tokenauth

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"
)

// Defaults of RemoteOptions.
const (
	DefaultFetchTimeout = 5 * time.Second
	DefaultMaxAge       = 5 * time.Minute
	DefaultCooldown     = 30 * time.Second
)

// emptyRetry is the least time between two fetches while no key set has
// ever been fetched, when it is shorter than the cooldown: an edge started
// before its backend then recovers within a second instead of answering 503
// for a whole cooldown.
const emptyRetry = time.Second

// RemoteOptions configure a RemoteKeySource. Zero fields take the defaults.
type RemoteOptions struct {
	// Client sends the requests. Nil means a client with Go's default
	// transport.
	Client *http.Client
	// Timeout bounds one fetch, from connecting to reading the body.
	// Default DefaultFetchTimeout.
	Timeout time.Duration
	// MaxAge is how long a fetched set is trusted: the first lookup after it
	// fetches the set again (keeping the old one if that fails). It bounds
	// how long a key removed by the backend is still accepted. Default
	// DefaultMaxAge.
	MaxAge time.Duration
	// Cooldown is the least time between two fetches, whatever prompts them:
	// a kid that is not in the set, or a set older than MaxAge. Tokens with
	// made-up kids therefore cost the backend at most one request per
	// Cooldown. The flip side: a key the backend starts signing with less
	// than Cooldown after the edge's last fetch is unknown until the
	// cooldown ends, so the backend should publish new keys ahead of use.
	// Default DefaultCooldown.
	Cooldown time.Duration
	// Logger receives failed fetches. Nil means no logging.
	Logger *zap.Logger
	// Now returns the current time. Nil means time.Now; tests set a clock.
	Now func() time.Time
}

// RemoteKeySource serves the keys of a JWK Set fetched over HTTP(S), such as
// the backend's /.well-known/jwks.json. The set is fetched on the first
// lookup and kept in memory; it is fetched again on a lookup of an unknown
// kid or after MaxAge, at most once per Cooldown, and concurrent lookups
// share one fetch. A failed fetch keeps the last good set in service. It is
// safe for concurrent use and starts no goroutine of its own.
type RemoteKeySource struct {
	url      *url.URL
	client   *http.Client
	timeout  time.Duration
	maxAge   time.Duration
	cooldown time.Duration
	logger   *zap.Logger
	now      func() time.Time

	cur   atomic.Pointer[fetchedSet]
	group singleflight.Group

	// Only the function running under group touches these, so they need
	// no lock of their own: group runs it once at a time.
	lastAttempt time.Time
	lastErr     error
}

// fetchedSet is a key set and the time it was fetched.
type fetchedSet struct {
	keys keySet
	at   time.Time
}

// NewRemoteKeySource returns a source for the JWK Set at rawURL, an http or
// https URL. It does not fetch anything yet.
func NewRemoteKeySource(rawURL string, opts RemoteOptions) (*RemoteKeySource, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("tokenauth: JWK Set URL must be an absolute http or https URL")
	}
	if opts.Timeout < 0 || opts.MaxAge < 0 || opts.Cooldown < 0 {
		return nil, errors.New("tokenauth: negative timeout, max age or cooldown")
	}
	s := &RemoteKeySource{
		url:      u,
		client:   opts.Client,
		timeout:  cmp.Or(opts.Timeout, DefaultFetchTimeout),
		maxAge:   cmp.Or(opts.MaxAge, DefaultMaxAge),
		cooldown: cmp.Or(opts.Cooldown, DefaultCooldown),
		logger:   opts.Logger,
		now:      opts.Now,
	}
	if s.client == nil {
		s.client = &http.Client{}
	}
	if s.logger == nil {
		s.logger = zap.NewNop()
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Key implements KeySource.
func (s *RemoteKeySource) Key(ctx context.Context, kid string) (ed25519.PublicKey, error) {
	set := s.cur.Load()
	if set != nil && s.now().Sub(set.at) < s.maxAge {
		if k, ok := set.keys[kid]; ok {
			return k, nil
		}
	}
	set, err := s.refresh(ctx)
	if set == nil {
		return nil, fmt.Errorf("%w: %w", ErrKeysUnavailable, err)
	}
	if k, ok := set.keys[kid]; ok {
		return k, nil
	}
	return nil, ErrUnknownKey
}

// refresh fetches the set unless the cooldown forbids it, joining a fetch
// already under way, and returns the set in service afterwards (nil if there
// has never been one) with the error of the fetch, if any. A caller whose
// context ends stops waiting; the fetch goes on for the others.
func (s *RemoteKeySource) refresh(ctx context.Context) (*fetchedSet, error) {
	ch := s.group.DoChan("", func() (any, error) {
		return s.fetchIfDue(context.WithoutCancel(ctx))
	})
	select {
	case r := <-ch:
		return r.Val.(*fetchedSet), r.Err
	case <-ctx.Done():
		return s.cur.Load(), ctx.Err()
	}
}

// fetchIfDue runs under s.group.
func (s *RemoteKeySource) fetchIfDue(ctx context.Context) (*fetchedSet, error) {
	cur := s.cur.Load()
	now := s.now()
	wait := s.cooldown
	if cur == nil {
		wait = min(wait, emptyRetry)
	}
	if !s.lastAttempt.IsZero() && now.Sub(s.lastAttempt) < wait {
		return cur, s.lastErr
	}
	s.lastAttempt = now
	keys, err := s.fetch(ctx)
	s.lastErr = err
	if err != nil {
		s.logger.Warn("JWK Set fetch failed; keeping the last good set",
			zap.String("url", s.url.Redacted()), zap.Bool("have_keys", cur != nil), zap.Error(err))
		return cur, err
	}
	next := &fetchedSet{keys: keys, at: now}
	s.cur.Store(next)
	s.logger.Debug("JWK Set fetched", zap.String("url", s.url.Redacted()), zap.Int("keys", len(keys)))
	return next, nil
}

// fetch downloads and parses the set.
func (s *RemoteKeySource) fetch(ctx context.Context) (keySet, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("tokenauth: JWK Set fetch: status %s", resp.Status)
	}
	return readJWKS(resp.Body)
}
