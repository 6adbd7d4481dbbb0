// Package fakeplane is a backend's key plane in memory, for the tests and
// the bench of the edge.
package fakeplane

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/kidfilter"
)

// KeyPlane is a backend's key plane in memory, serving contract.PathKey,
// contract.PathKeyChanges and contract.PathClientLimits as the backend does (a request for changes
// waits for one up to its wait), and keeping the edges' reports
// (contract.PathEdgeReport).
type KeyPlane struct {
	mu      sync.Mutex
	keys    map[string]contract.ClientKey
	limits  map[string]clientLimits // by client; nil limits: removed
	last    int64
	changed chan struct{}
	reports []contract.EdgeReport
	// Lookups counts the requests for a key.
	Lookups atomic.Int64
	// Down, while set, answers 503 to every request.
	Down atomic.Bool
	// Gate, when set before serving, holds each look-up until it closes.
	Gate chan struct{}
	// NoFilter, when set before serving, answers 404 to the kid filter's
	// route, as a backend of a version before it.
	NoFilter bool
}

// NewKeyPlane returns an empty key plane.
func NewKeyPlane() *KeyPlane {
	return &KeyPlane{keys: map[string]contract.ClientKey{}, limits: map[string]clientLimits{}, changed: make(chan struct{})}
}

// clientLimits are a client's limits and the number of their last change.
type clientLimits struct {
	limits *contract.Limits
	seq    int64
}

// SetLimits sets client's limits (nil: removes them), giving the change
// the next number, as hdc clients limits does.
func (p *KeyPlane) SetLimits(client string, l *contract.Limits) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last++
	p.limits[client] = clientLimits{limits: l, seq: p.last}
	close(p.changed)
	p.changed = make(chan struct{})
}

// serveLimits serves contract.PathClientLimits: every client's limits in
// one page, or one client's (404 when it has none).
func (p *KeyPlane) serveLimits(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if id := r.PathValue("client_id"); id != "" {
		if c, ok := p.limits[id]; ok && c.limits != nil {
			_ = json.NewEncoder(w).Encode(contract.ClientLimits{ClientID: id, Limits: *c.limits})
			return
		}
		http.NotFound(w, r)
		return
	}
	page := struct {
		Limits []contract.ClientLimits `json:"limits"`
		Next   string                  `json:"next"`
	}{Limits: []contract.ClientLimits{}}
	for id, c := range p.limits {
		if c.limits != nil {
			page.Limits = append(page.Limits, contract.ClientLimits{ClientID: id, Limits: *c.limits})
		}
	}
	_ = json.NewEncoder(w).Encode(page)
}

// Set adds or changes the A128CBC-HS256 key kid of client, as hdc keys
// does, giving it the next change number.
func (p *KeyPlane) Set(kid, client, secret string, status clientkey.Status) {
	p.SetKey(clientkey.Key{Kid: kid, ClientID: client, Secret: secret, Enc: "A128CBC-HS256", Status: status})
}

// SetKey adds or changes the key k, giving it the next change number and,
// when it has none, a creation time.
func (p *KeyPlane) SetKey(k clientkey.Key) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last++
	if k.CreatedAt.IsZero() {
		k.CreatedAt = time.Now().UTC()
	}
	p.keys[k.Kid] = contract.WireKey(k, p.last)
	close(p.changed)
	p.changed = make(chan struct{})
}

// Last returns the number of the newest change.
func (p *KeyPlane) Last() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// Reports returns the edges' reports taken, oldest first.
func (p *KeyPlane) Reports() []contract.EdgeReport {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.reports)
}

// ServeHTTP serves the key plane's routes and the edges' reports.
func (p *KeyPlane) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+contract.PathKey, p.key)
	mux.HandleFunc("GET "+contract.PathKeyChanges, p.changes)
	mux.HandleFunc("POST "+contract.PathEdgeReport, p.report)
	mux.HandleFunc("GET "+contract.PathClientLimits, p.serveLimits)
	mux.HandleFunc("GET "+contract.PathClientLimits+"/{client_id}", p.serveLimits)
	if !p.NoFilter {
		mux.HandleFunc("GET "+contract.PathKeyFilter, p.filter)
	}
	if p.Down.Load() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	mux.ServeHTTP(w, r)
}

func (p *KeyPlane) key(w http.ResponseWriter, r *http.Request) {
	p.Lookups.Add(1)
	if p.Gate != nil {
		<-p.Gate
	}
	p.mu.Lock()
	k, ok := p.keys[r.PathValue("kid")]
	p.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	_ = json.NewEncoder(w).Encode(k)
}

func (p *KeyPlane) changes(w http.ResponseWriter, r *http.Request) {
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	wait, _ := time.ParseDuration(r.URL.Query().Get("wait"))
	p.mu.Lock()
	last, changed := p.last, p.changed
	p.mu.Unlock()
	if last <= after && wait > 0 {
		select {
		case <-changed:
		case <-time.After(wait):
		case <-r.Context().Done():
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := contract.KeyChanges{Changes: []clientkey.Change{}, Last: p.last}
	for _, k := range p.keys {
		if k.Seq > after {
			out.Changes = append(out.Changes, clientkey.Change{Kid: k.Kid, Seq: k.Seq})
		}
	}
	for client, c := range p.limits {
		if c.seq > after {
			out.Changes = append(out.Changes, clientkey.Change{Client: client, Seq: c.seq})
		}
	}
	_ = json.NewEncoder(w).Encode(out)
}

func (p *KeyPlane) report(w http.ResponseWriter, r *http.Request) {
	var rep contract.EdgeReport
	if err := json.NewDecoder(r.Body).Decode(&rep); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.reports = append(p.reports, rep)
	p.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (p *KeyPlane) filter(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := kidfilter.New(len(p.keys))
	for kid := range p.keys {
		f.Add(kid)
	}
	wire, err := f.Wire(p.last)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_ = json.NewEncoder(w).Encode(wire)
}
