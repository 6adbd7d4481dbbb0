package keyplane

import (
	"context"
	"net/http"
	"strconv"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/internal/contract"
)

// LimitsStore holds the clients' overrides of their limits.
type LimitsStore interface {
	// ClientLimits returns clientID's overrides, and whether it has any.
	ClientLimits(ctx context.Context, clientID string) (contract.Limits, bool, error)
	// ListClientLimits returns up to limit clients' overrides, those of
	// the clients after after in the order of their ids.
	ListClientLimits(ctx context.Context, after string, limit int) ([]contract.ClientLimits, error)
}

// Limits pages of the clients' limits: the default and the largest.
const (
	DefaultLimitsPage = 1000
	MaxLimitsPage     = 10000
)

// LimitsPage is the answer to GET contract.PathClientLimits.
type LimitsPage struct {
	Limits []contract.ClientLimits `json:"limits"`
	// Next is the client id to ask after for the next page; empty on the
	// last.
	Next string `json:"next"`
}

// LimitsHandler serves the clients' limits to the edges
// (contract.PathClientLimits).
type LimitsHandler struct {
	store LimitsStore
	list  http.Handler
	one   http.Handler
}

// NewLimits returns the handler of the clients' limits held by s.
func NewLimits(s LimitsStore, log *zap.Logger) *LimitsHandler {
	h := &LimitsHandler{store: s}
	problems := &web.Problems{Log: log}
	h.list = problems.Handler("client_limits", h.serveList)
	h.one = problems.Handler("client_limit", h.serveOne)
	return h
}

// List serves GET contract.PathClientLimits: a page of every override.
func (h *LimitsHandler) List(w http.ResponseWriter, r *http.Request) { h.list.ServeHTTP(w, r) }

// One serves GET contract.PathClientLimits/{client_id}: one client's
// overrides, or 404.
func (h *LimitsHandler) One(w http.ResponseWriter, r *http.Request) { h.one.ServeHTTP(w, r) }

func (h *LimitsHandler) serveList(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit := DefaultLimitsPage
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxLimitsPage {
			return web.BadRequest("limit must be a number from 1 to " + strconv.Itoa(MaxLimitsPage))
		}
		limit = n
	}
	page, err := h.store.ListClientLimits(r.Context(), q.Get("after"), limit)
	if err != nil {
		return err
	}
	out := LimitsPage{Limits: page}
	if out.Limits == nil {
		out.Limits = []contract.ClientLimits{}
	}
	if len(page) == limit {
		out.Next = page[len(page)-1].ClientID
	}
	web.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *LimitsHandler) serveOne(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("client_id")
	l, ok, err := h.store.ClientLimits(r.Context(), id)
	if err != nil {
		return err
	}
	if !ok {
		return web.NotFound()
	}
	web.WriteJSON(w, http.StatusOK, contract.ClientLimits{ClientID: id, Limits: l})
	return nil
}
