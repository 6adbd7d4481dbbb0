package fleet

import (
	"context"
	"os"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/version"
)

// Heartbeat writes a backend's row into the store while it runs, in place
// of the row of an earlier process at its host and address, and removes
// the rows of the backends and edges not heard from within its bound: a
// statement or two on tables of a row per process.
type Heartbeat struct {
	store       store.Fleet
	self        store.FleetBackend
	every       time.Duration
	forgetAfter time.Duration
	log         *zap.Logger
	now         func() time.Time
}

// NewHeartbeat returns the heartbeat of this process, which serves its
// internal listener at address: a random id, the host's name and the
// build's version, started now. It removes the rows not heard from
// within forgetAfter.
func NewHeartbeat(st store.Fleet, address string, forgetAfter time.Duration, log *zap.Logger) *Heartbeat {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return &Heartbeat{store: st, every: HeartbeatEvery, forgetAfter: forgetAfter, log: log, now: time.Now,
		self: store.FleetBackend{ID: uuid.NewString(), Host: host, Version: version.Get().String(), Address: address, StartedAt: time.Now()}}
}

// ID is the backend's id in the fleet.
func (h *Heartbeat) ID() string { return h.self.ID }

// Run beats at once, then every HeartbeatEvery until ctx is done. It logs
// when the beats start to fail, and when they work again.
func (h *Heartbeat) Run(ctx context.Context) {
	t := time.NewTicker(h.every)
	defer t.Stop()
	failing := false
	for {
		err := h.beat(ctx)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil && !failing:
			h.log.Warn("the backend's heartbeat failed; trying again at each interval", zap.Error(err))
		case err == nil && failing:
			h.log.Info("the backend's heartbeat works again")
		}
		failing = err != nil
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// beat writes the backend's row, seen now, and removes the rows not heard
// from within the bound.
func (h *Heartbeat) beat(ctx context.Context) error {
	b := h.self
	b.LastSeen = h.now()
	if err := h.store.BeatBackend(ctx, b); err != nil {
		return err
	}
	_, err := h.store.ForgetFleet(ctx, b.LastSeen.Add(-h.forgetAfter))
	return err
}
