// Package fleet is the deployment as its backends see it: every backend
// process writes a heartbeat into the store (Heartbeat), every edge that
// follows the key plane reports to a backend with the kids it used
// (Handler), and an operator reads both (Service): which backends run,
// which edges follow the key plane, how far behind each is, and, through
// the store's keys, each key's last use at any edge.
package fleet

import (
	"context"
	"math"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
)

// HeartbeatEvery is how often a backend writes its heartbeat.
const HeartbeatEvery = 5 * time.Second

// currentBeats is how many heartbeats (or an edge's reports) may be
// missed before a backend (or edge) is no longer current: a slow write is
// not a stop.
const currentBeats = 3

// DefaultForgetAfter is how long a backend or an edge not heard from
// stays in the fleet's view by default (the backend's
// HDC_FLEET_FORGET_AFTER): then it leaves the view, and the heartbeats
// remove its row.
const DefaultForgetAfter = time.Hour

// MinForgetAfter is the shortest bound a fleet may forget its silent
// processes after: the time a process stays current, so that none
// leaves the view while it is.
const MinForgetAfter = currentBeats * HeartbeatEvery

// Store is what the fleet is kept in: the store's Fleet role, and the key
// plane's newest change number, which an edge's lag is counted from.
type Store interface {
	store.Fleet
	ClientKeyChanges(ctx context.Context, after int64, limit int) ([]clientkey.Change, int64, error)
}

// Service reads the fleet as an operator sees it.
type Service struct {
	store       Store
	forgetAfter time.Duration
	now         func() time.Time
}

// New returns the Service over st, whose view leaves out the processes
// not heard from within forgetAfter.
func New(st Store, forgetAfter time.Duration) *Service {
	return &Service{store: st, forgetAfter: forgetAfter, now: time.Now}
}

// Backend is a backend process as its last heartbeat described it.
type Backend struct {
	ID        string    `json:"id"`      // made at random when the process started
	Host      string    `json:"host"`    // the host name
	Version   string    `json:"version"` // the build
	Address   string    `json:"address"` // the internal listener's address
	StartedAt time.Time `json:"started_at"`
	LastSeen  time.Time `json:"last_seen"`
	// Current: its last heartbeat is within three of its intervals.
	Current bool `json:"current"`
	// LeavesAt is when it leaves the fleet's view unless it beats again.
	LeavesAt time.Time `json:"leaves_at"`
}

// Edge is an edge as its last report described it.
type Edge struct {
	ID string `json:"id"` // the edge's instance id, made when it started
	// Name and Serial are the subject's common name and the serial number
	// (hexadecimal) of its client certificate; empty without the hop's
	// TLS.
	Name   string `json:"name"`
	Serial string `json:"serial"`
	// AppliedSeq is the number of the last key plane change the edge
	// applied, as of its last report, and Lag how many numbers that is
	// behind the newest now.
	AppliedSeq int64 `json:"applied_seq"`
	Lag        int64 `json:"lag"`
	// LastContact is when a backend took its last report, and Source the
	// address it came from.
	LastContact time.Time `json:"last_contact"`
	Source      string    `json:"source"`
	// Current: its last report is within three of its intervals.
	Current bool `json:"current"`
	// LeavesAt is when it leaves the fleet's view unless it reports
	// again.
	LeavesAt time.Time `json:"leaves_at"`
}

// Backends returns the backends heard from within the Service's bound,
// by id.
func (s *Service) Backends(ctx context.Context) ([]Backend, error) {
	rows, err := s.store.ListBackends(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now()
	out := make([]Backend, 0, len(rows))
	for _, b := range rows {
		if s.forgotten(now, b.LastSeen) {
			continue
		}
		out = append(out, Backend{ID: b.ID, Host: b.Host, Version: b.Version, Address: b.Address, StartedAt: b.StartedAt, LastSeen: b.LastSeen,
			Current: current(now, b.LastSeen, HeartbeatEvery), LeavesAt: b.LastSeen.Add(s.forgetAfter)})
	}
	return out, nil
}

// Edges returns the edges heard from within the Service's bound, by id,
// each with its lag behind the key plane's newest change.
func (s *Service) Edges(ctx context.Context) ([]Edge, error) {
	rows, err := s.store.ListEdges(ctx)
	if err != nil {
		return nil, err
	}
	_, newest, err := s.store.ClientKeyChanges(ctx, math.MaxInt64, 0) // no change, only the newest number
	if err != nil {
		return nil, err
	}
	now := s.now()
	out := make([]Edge, 0, len(rows))
	for _, e := range rows {
		if s.forgotten(now, e.LastContact) {
			continue
		}
		out = append(out, Edge{ID: e.ID, Name: e.Name, Serial: e.Serial, AppliedSeq: e.AppliedSeq, Lag: max(newest-e.AppliedSeq, 0),
			LastContact: e.LastContact, Source: e.Source, Current: current(now, e.LastContact, contract.EdgeReportEvery),
			LeavesAt: e.LastContact.Add(s.forgetAfter)})
	}
	return out, nil
}

// forgotten reports whether a process last heard from at seen has been
// silent at now for longer than the Service's bound.
func (s *Service) forgotten(now, seen time.Time) bool { return now.Sub(seen) > s.forgetAfter }

// current reports whether a process last heard from at seen, which is
// heard from every interval, is still running at now.
func current(now, seen time.Time, every time.Duration) bool {
	return now.Sub(seen) <= currentBeats*every
}
