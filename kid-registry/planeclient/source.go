package planeclient

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"
	"golang.org/x/time/rate"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/kidfilter"
)

// Config configures a Source.
type Config struct {
	// URL is the backend's internal listener.
	URL string
	// Client is the hop's client: its TLS presents the edge's certificate.
	Client *http.Client
	// CacheSize bounds the keys kept (default 100000).
	CacheSize int
	// UnknownSize bounds the unknown kids remembered (default 100000),
	// for UnknownTTL (default 30s; the feed forgets one the backend adds).
	UnknownSize int
	UnknownTTL  time.Duration
	// LookupRate and LookupBurst bound the look-ups of kids in neither
	// cache (default 100/s, burst 200); SourceRate and SourceBurst bound
	// what one source address asks for of kids the edge does not hold,
	// looked up or not, and its requests refused on a key the edge holds
	// (default 10/s, burst 20), of which Sources are remembered (default
	// 10000, the least recent forgotten). Past them the look-up is not
	// made, and Lookup (and Refused) return ErrBusy.
	LookupRate  float64
	LookupBurst int
	SourceRate  float64
	SourceBurst int
	Sources     int
	// LookupTimeout bounds a look-up (default 2s).
	LookupTimeout time.Duration
	// Wait is how long the backend holds a request for changes (default
	// 25s); Retry is the longest pause before asking again after a
	// failure (default 1s): the feed's catch-up interval, and the longest
	// its gauge may read 0 once a backend answers again.
	Wait, Retry time.Duration
	// ReportEvery is how often Report reports to the backend (default
	// contract.EdgeReportEvery).
	ReportEvery time.Duration
	// Observer sees the look-ups and the feed; nil for none.
	Observer Observer
	Log      *zap.Logger
}

// Observer sees what a Source does, for metrics.
type Observer interface {
	// Lookup counts a look-up of a kid by result: in the backend, found,
	// unknown, failed; or not made: cached (the key is in the cache),
	// remembered (a kid the backend did not know, not asked again yet),
	// filtered (the kid filter rules the kid out), limited (over a rate).
	Lookup(result string)
	// Feed reports whether the feed answers, and the number applied.
	Feed(up bool, applied int64)
}

func (c *Config) defaults() {
	orDefault(&c.CacheSize, 100_000)
	orDefault(&c.UnknownSize, 100_000)
	orDefault(&c.LookupRate, 100)
	orDefault(&c.LookupBurst, 200)
	orDefault(&c.SourceRate, 10)
	orDefault(&c.SourceBurst, 20)
	orDefault(&c.Sources, 10_000)
	orDefault(&c.UnknownTTL, 30*time.Second)
	orDefault(&c.LookupTimeout, 2*time.Second)
	orDefault(&c.Wait, 25*time.Second)
	orDefault(&c.Retry, time.Second)
	orDefault(&c.ReportEvery, contract.EdgeReportEvery)
	if c.Observer == nil {
		c.Observer = nopObserver{}
	}
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
}

// orDefault sets *v to d when it is not positive.
func orDefault[T int | float64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// Source finds keys in the backend. It is safe for concurrent use.
type Source struct {
	cfg     Config
	client  client
	keys    *lru.Cache[string, cached]
	unknown *expirable.LRU[string, struct{}]
	flight  singleflight.Group
	limit   *rate.Limiter
	// sources are the look-up rations of the source addresses seen.
	sources *lru.Cache[string, *rate.Limiter]
	// filter holds every kid the backend has, as the feed left it; nil
	// until it is loaded, or when the backend serves none.
	filter atomic.Pointer[kidfilter.Filter]
	// mu orders caching a look-up's answer against the changes the feed
	// applies and Forget (generation). While a kid is looked up, pending
	// holds the newest number of its changes applied meanwhile (0: none):
	// its answer is cached when it is at least as new, so that the change
	// that added a key, arriving after its first use, keeps it cached,
	// and an answer older than a change is not; an unknown kid is cached
	// only when none came.
	mu         sync.Mutex
	pending    map[string]int64
	generation int64
	// id is this edge's instance id in its reports; applied is the
	// number of the last change the feed applied, 0 before its first
	// answer.
	id      string
	applied atomic.Int64
	// limits are the clients' overrides of their limits, as the feed
	// left them (limits.go); limitsMu orders their updates.
	limits   atomic.Pointer[map[string]contract.Limits]
	limitsMu sync.Mutex
}

// cached is a key with the number of its last change.
type cached struct {
	key *clientkey.Key
	seq int64
}

// New returns a Source; Run follows the backend's changes.
func New(cfg Config) (*Source, error) {
	cfg.defaults()
	if cfg.URL == "" || cfg.Client == nil {
		return nil, errors.New("planeclient: the backend's URL and the hop's client are required")
	}
	keys, err := lru.New[string, cached](cfg.CacheSize)
	if err != nil {
		return nil, err
	}
	sources, err := lru.New[string, *rate.Limiter](cfg.Sources)
	if err != nil {
		return nil, err
	}
	return &Source{
		cfg:     cfg,
		client:  client{base: strings.TrimSuffix(cfg.URL, "/"), http: cfg.Client},
		keys:    keys,
		unknown: expirable.NewLRU[string, struct{}](cfg.UnknownSize, nil, cfg.UnknownTTL),
		pending: map[string]int64{},
		limit:   rate.NewLimiter(rate.Limit(cfg.LookupRate), cfg.LookupBurst),
		sources: sources,
		id:      uuid.NewString(),
	}, nil
}

// ErrUnknown is a kid the backend has no key of, or that the kid filter
// rules out.
var ErrUnknown = errors.New("planeclient: no such key")

// ErrBusy is a look-up not made because the look-ups, of the request's
// source or of every source, are over their rate: the kid may be a key.
var ErrBusy = errors.New("planeclient: too many look-ups of keys this edge does not hold")

// Lookup returns the key kid, whatever its status, from the cache or the
// backend, for a request from the address source. It returns ErrUnknown
// when the backend has no such key, or the kid filter rules it out (the
// backend is not asked), or the backend cannot be asked; ErrBusy when the
// look-ups of source, or of every source, are over their rate.
//
// Every kid the edge does not hold costs the request's source a ration,
// whether it exists or not (the requests that share one look-up spend
// one, the first one's source's), and none is asked for while the source
// has no ration left, or every source's look-ups are spent: such a request
// gets ErrBusy, whatever its kid, so that the answers to a source do not
// tell a kid that exists from one the filter rules out (Refused does the
// same for a kid the edge holds). Every source's look-ups are spent by
// look-ups alone: a kid the filter rules out costs the backend nothing.
func (s *Source) Lookup(ctx context.Context, kid, source string) (*clientkey.Key, error) {
	if c, ok := s.keys.Get(kid); ok {
		s.cfg.Observer.Lookup("cached")
		return c.key, nil
	}
	ration := s.sourceRation(source)
	if ration.Tokens() < 1 || s.limit.Tokens() < 1 {
		s.cfg.Observer.Lookup("limited")
		return nil, ErrBusy
	}
	if s.unknown.Contains(kid) {
		ration.Allow()
		s.cfg.Observer.Lookup("remembered")
		return nil, ErrUnknown
	}
	if f := s.filter.Load(); f != nil && !f.MayHold(kid) {
		ration.Allow()
		s.cfg.Observer.Lookup("filtered")
		return nil, ErrUnknown
	}
	v, err, _ := s.flight.Do(kid, func() (any, error) {
		if c, ok := s.keys.Get(kid); ok { // a look-up just finished
			return c.key, nil
		}
		if !ration.Allow() || !s.limit.Allow() {
			s.cfg.Observer.Lookup("limited")
			return nil, ErrBusy
		}
		return s.fetch(context.WithoutCancel(ctx), kid), nil
	})
	if k, _ := v.(*clientkey.Key); k != nil {
		return k, nil
	}
	return nil, cmp.Or(err, ErrUnknown)
}

// Refused spends a ration of source for a request refused on a key the
// edge held (another client's, retired, of another enc, or a tag that did
// not verify), and returns ErrBusy when source has none left: a source
// that has spent its ration then gets that one answer for a kid the edge
// holds as for any other (Lookup), and each request refused on its key
// costs it one ration, whatever the kid.
func (s *Source) Refused(source string) error {
	if !s.sourceRation(source).Allow() {
		s.cfg.Observer.Lookup("limited")
		return ErrBusy
	}
	return nil
}

// sourceRation returns the look-up ration of the address addr.
func (s *Source) sourceRation(addr string) *rate.Limiter {
	if l, ok := s.sources.Get(addr); ok {
		return l
	}
	l := rate.NewLimiter(rate.Limit(s.cfg.SourceRate), s.cfg.SourceBurst)
	if prev, ok, _ := s.sources.PeekOrAdd(addr, l); ok {
		return prev
	}
	return l
}

// fetch looks kid up in the backend and caches the answer, unless it may
// be older than a change applied meanwhile.
func (s *Source) fetch(ctx context.Context, kid string) *clientkey.Key {
	s.mu.Lock()
	gen := s.generation
	s.pending[kid] = 0
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.LookupTimeout)
	defer cancel()
	k, seq, err := s.client.key(ctx, kid)
	switch {
	case errors.Is(err, ErrUnknown):
		s.cfg.Observer.Lookup("unknown")
		s.cache(kid, gen, 0, func() { s.unknown.Add(kid, struct{}{}) })
		return nil
	case err != nil:
		s.cfg.Observer.Lookup("failed")
		s.cfg.Log.Warn("looking a key up in the backend failed", zap.String("kid", kid), zap.Error(err))
		s.cache(kid, gen, -1, nil)
		return nil
	}
	s.cfg.Observer.Lookup("found")
	s.cache(kid, gen, seq, func() { s.keys.Add(kid, cached{k, seq}) })
	return k
}

// cache ends the look-up of kid, running add (if any) when the answer, of
// change number seq, is as new as the kid's changes applied meanwhile and
// Forget has not run since generation gen.
func (s *Source) cache(kid string, gen, seq int64, add func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	newest := s.pending[kid]
	delete(s.pending, kid)
	if add != nil && s.generation == gen && seq >= newest {
		add()
	}
}

// Cached reports whether kid is in the cache, without asking.
func (s *Source) Cached(kid string) bool { return s.keys.Contains(kid) }

// Keys returns the keys in the cache, the kids this edge has used.
func (s *Source) Keys() []clientkey.Key {
	keys := s.keys.Values()
	out := make([]clientkey.Key, len(keys))
	for i, c := range keys {
		out[i] = *c.key
	}
	return out
}

// Forget empties both caches: every kid is looked up again.
func (s *Source) Forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.generation++
	s.keys.Purge()
	s.unknown.Purge()
}

// changed applies changes: each changed kid is added to the kid filter,
// and dropped from both caches unless the key cached is as new as its
// change (it was looked up after the change), so that its next use looks
// it up again. It reports whether the filter now holds more kids than it
// was sized for.
func (s *Source) changed(changes []clientkey.Change) (full bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	filter := s.filter.Load()
	for _, c := range changes {
		if c.Kid == "" { // a client's limits changed (limits.go)
			continue
		}
		if filter != nil {
			filter.Add(c.Kid)
		}
		if k, ok := s.keys.Peek(c.Kid); !ok || k.seq < c.Seq {
			s.keys.Remove(c.Kid)
		}
		s.unknown.Remove(c.Kid)
		if newest, ok := s.pending[c.Kid]; ok {
			s.pending[c.Kid] = max(newest, c.Seq)
		}
	}
	return filter != nil && filter.Full()
}

type nopObserver struct{}

func (nopObserver) Lookup(string)    {}
func (nopObserver) Feed(bool, int64) {}
