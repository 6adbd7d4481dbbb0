package edge

import (
	"net/http"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/problem"
)

// FreshConfig configures the freshness of encrypted requests: the iat and
// jti of their protected header.
type FreshConfig struct {
	// Window is how far an envelope's iat may be from the edge's clock,
	// either way (default 300s). The backend remembers each jti until
	// iat + Window, so a replay through any edge is refused meanwhile, and
	// a later one is refused as stale.
	Window caddy.Duration `json:"window,omitempty"`
	// Remember bounds the jtis this edge remembers to refuse a replay
	// before asking the backend (default 100000).
	Remember int `json:"remember,omitempty"`
}

const (
	defaultFreshWindow   = 300 * time.Second
	defaultFreshRemember = 100_000
)

var (
	errFreshnessRequired = problem.New(http.StatusBadRequest, problem.CodeFreshnessRequired,
		`This key requires "iat" (seconds since the epoch) and "jti" (16 to 128 printable characters, at least 128 bits of randomness) in the protected header.`)
	errFreshnessMalformed = problem.New(http.StatusBadRequest, problem.CodeFreshnessRequired,
		`"iat" and "jti" come together in the protected header; "jti" is 16 to 128 printable characters.`)
	errStale = problem.New(http.StatusBadRequest, problem.CodeStaleRequest,
		`The envelope's "iat" is too far from the edge's clock: make each request's envelope when it is sent.`)
	errReplayed = problem.New(http.StatusBadRequest, problem.CodeReplayedRequest,
		"This request (its jti, under its key) was already received: send every request with a new jti.")
)

// Freshness checks the iat and jti of opened envelopes, remembering the
// jtis it passed to refuse a replay to this edge early; the backend's
// record, which every edge shares, is the one that counts.
type Freshness struct {
	window time.Duration
	seen   *jtiMemory
	now    func() time.Time
}

func newFreshness(c FreshConfig) *Freshness {
	window := time.Duration(c.Window)
	if window <= 0 {
		window = defaultFreshWindow
	}
	remember := c.Remember
	if remember <= 0 {
		remember = defaultFreshRemember
	}
	return &Freshness{window: window, seen: newJTIMemory(remember), now: time.Now}
}

// Check is called once the envelope's tag has verified under k, so its
// answers may differ: only the key's holder can make the header. It
// returns the headers to hand the backend, none when the envelope names
// neither iat nor jti and k does not require them.
func (f *Freshness) Check(k *clientkey.Key, h jwe.Header) (http.Header, *problem.Problem) {
	switch {
	case h.Iat == 0 && h.Jti == "" && !k.NeedsFreshness():
		return nil, nil
	case h.Iat == 0 && h.Jti == "":
		return nil, errFreshnessRequired
	case h.Iat == 0 || !contract.ValidJTI(h.Jti):
		return nil, errFreshnessMalformed
	}
	iat := time.Unix(h.Iat, 0)
	if d := f.now().Sub(iat); d > f.window || d < -f.window {
		return nil, errStale
	}
	if f.seen.add(k.Kid, h.Jti) {
		return nil, errReplayed
	}
	return http.Header{
		contract.HeaderJTI:        {h.Jti},
		contract.HeaderJTIExpires: {strconv.FormatInt(iat.Add(f.window).Unix(), 10)},
	}, nil
}
