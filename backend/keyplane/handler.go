package keyplane

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/internal/metrics"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
)

// Handler serves the key plane's routes (contract.PathKey,
// contract.PathKeyChanges and contract.PathKeyFilter) to the edges.
type Handler struct {
	store   store.ClientKeys
	hub     *Hub
	lookups *prometheus.CounterVec
	key     http.Handler
	changes http.Handler
	filter  http.Handler
	// filterPage is how many kids the filter's build reads at once.
	filterPage int
}

// New returns the key plane's handler over s, its waits served by hub.
func New(s store.ClientKeys, hub *Hub, log *zap.Logger, reg prometheus.Registerer) (*Handler, error) {
	h := &Handler{store: s, hub: hub, filterPage: filterPage,
		lookups: prometheus.NewCounterVec(metrics.Counter("key_lookups_total",
			"Look-ups of a client key by the edges, by result (found, unknown)."), []string{"result"})}
	sequence := prometheus.NewGaugeFunc(metrics.Gauge("key_plane_sequence",
		"The newest key plane change number this backend has read; an edge's hdc_edge_key_feed_applied_sequence trails it by the feed's lag."),
		func() float64 { return float64(hub.Last()) })
	if err := metrics.Register(reg, h.lookups, sequence); err != nil {
		return nil, err
	}
	problems := &web.Problems{Log: log, Known: web.ErrorMap{{Err: store.ErrNotFound, Problem: web.NotFound()}}}
	h.key = problems.Handler("key", h.serveKey)
	h.changes = problems.Handler("key_changes", h.serveChanges)
	h.filter = problems.Handler("key_filter", h.serveFilter)
	return h, nil
}

// Key serves GET contract.PathKey: the key with its secret, or 404.
func (h *Handler) Key(w http.ResponseWriter, r *http.Request) { h.key.ServeHTTP(w, r) }

// Changes serves GET contract.PathKeyChanges.
func (h *Handler) Changes(w http.ResponseWriter, r *http.Request) { h.changes.ServeHTTP(w, r) }

// Filter serves GET contract.PathKeyFilter.
func (h *Handler) Filter(w http.ResponseWriter, r *http.Request) { h.filter.ServeHTTP(w, r) }

func (h *Handler) serveKey(w http.ResponseWriter, r *http.Request) error {
	kid := r.PathValue("kid")
	if !clientkey.ValidKid(kid) {
		h.lookups.WithLabelValues("unknown").Inc()
		return web.NotFound()
	}
	k, err := h.store.ClientKey(r.Context(), kid)
	if errors.Is(err, store.ErrNotFound) {
		h.lookups.WithLabelValues("unknown").Inc()
	}
	if err != nil {
		return err
	}
	h.lookups.WithLabelValues("found").Inc()
	web.WriteJSON(w, http.StatusOK, contract.WireKey(k.Key, k.Seq))
	return nil
}

func (h *Handler) serveChanges(w http.ResponseWriter, r *http.Request) error {
	after, wait, err := changesQuery(r)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(wait)
	for waiting := true; ; {
		cs, last, err := h.store.ClientKeyChanges(r.Context(), after, contract.MaxKeyChanges)
		if err != nil && r.Context().Err() != nil {
			return nil // the edge gave up (it stops, or a new config replaced its feed): no one to answer
		}
		if err != nil {
			return err
		}
		left := time.Until(deadline)
		if len(cs) > 0 || last > after || left <= 0 || !waiting || r.Context().Err() != nil {
			out := contract.KeyChanges{Changes: make([]clientkey.Change, len(cs)), Last: last}
			for i, c := range cs {
				out.Changes[i] = clientkey.Change{Kid: c.Kid, Seq: c.Seq, Client: c.Client}
			}
			web.WriteJSON(w, http.StatusOK, out)
			return nil
		}
		waiting = h.hub.Wait(r.Context(), after, left)
	}
}

// changesQuery reads after (a change number, 0 or more) and wait (a
// duration up to contract.MaxKeyChangesWait, 0 by default).
func changesQuery(r *http.Request) (after int64, wait time.Duration, err error) {
	q := r.URL.Query()
	if v := q.Get("after"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			return 0, 0, web.BadRequest("after must be a change number, 0 or more")
		}
	}
	if v := q.Get("wait"); v != "" {
		if wait, err = time.ParseDuration(v); err != nil || wait < 0 || wait > contract.MaxKeyChangesWait {
			return 0, 0, web.BadRequest("wait must be a duration from 0s to " + contract.MaxKeyChangesWait.String())
		}
	}
	return after, wait, nil
}
