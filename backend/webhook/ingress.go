package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/internal/metrics"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/strictjson"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// ErrUnknownEvent is wrapped by ParseEvent's error for a type that is not
// one of Events.
var ErrUnknownEvent = errors.New("unknown event type")

// Event is the body of a publication on the internal events endpoint.
type Event struct {
	// Type is one of Events.
	Type        string `json:"type"`
	WorkspaceID string `json:"workspace_id"`
	// Data is any JSON object; subscribers receive it as the payload's data.
	Data json.RawMessage `json:"data"`
}

// Published is the answer to a publication: the event's id and how many
// deliveries it was queued for.
type Published struct {
	ID         string `json:"id"`
	Deliveries int    `json:"deliveries"`
}

// ParseEvent reads and validates a publication body; Data comes back
// compacted. Its errors are safe to show to the publisher.
func ParseEvent(body []byte) (Event, error) {
	var ev Event
	if err := strictjson.Unmarshal(body, &ev); err != nil {
		return Event{}, err
	}
	switch {
	case ev.Type == "":
		return Event{}, errors.New("type is required")
	case !slices.Contains(Events, ev.Type):
		return Event{}, fmt.Errorf("%w; known events: %s", ErrUnknownEvent, strings.Join(Events, ", "))
	case !contract.ValidID(ev.WorkspaceID):
		return Event{}, errors.New("workspace_id must be a workspace id")
	case len(ev.Data) == 0 || ev.Data[0] != '{':
		return Event{}, errors.New("data must be a JSON object")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, ev.Data); err != nil {
		return Event{}, fmt.Errorf("%w: data", strictjson.ErrSyntax)
	}
	ev.Data = compact.Bytes()
	return ev, nil
}

// Ingress serves the internal events endpoint, where other services
// publish appointment, prescription, receipt and user events. It has no
// authentication of its own: it belongs on the internal listener, which
// must stay reachable only by trusted services.
type Ingress struct {
	store   store.Outbox
	notify  func()
	log     *zap.Logger
	now     func() time.Time
	events  *prometheus.CounterVec
	publish http.Handler
}

// NewIngress returns an Ingress that calls notify after queueing
// deliveries, and registers its metrics.
func NewIngress(s store.Outbox, notify func(), log *zap.Logger, reg prometheus.Registerer) (*Ingress, error) {
	in := &Ingress{
		store:  s,
		notify: notify,
		log:    log,
		now:    time.Now,
		events: prometheus.NewCounterVec(metrics.Counter("webhook_events_total", "Events published on the internal listener, by type."), []string{"type"}),
	}
	if err := reg.Register(in.events); err != nil {
		return nil, err
	}
	problems := &web.Problems{
		Known: web.ErrorMap{
			{Err: store.ErrNotFound, Problem: problem.New(http.StatusNotFound, problem.CodeUnknownWorkspace, "no such workspace")},
		},
		Log: log,
	}
	in.publish = problems.Handler("events", in.servePublish)
	return in, nil
}

// Publish serves POST /internal/v1/events: the event and its deliveries are
// stored in one transaction before the answer, 202 with Published. An
// unknown type is 400 unknown_event; an unknown workspace is 404
// unknown_workspace.
func (in *Ingress) Publish(w http.ResponseWriter, r *http.Request) { in.publish.ServeHTTP(w, r) }

func (in *Ingress) servePublish(w http.ResponseWriter, r *http.Request) error {
	body, p := web.ReadJSON(w, r)
	if p != nil {
		return p
	}
	ev, err := ParseEvent(body)
	switch {
	case errors.Is(err, ErrUnknownEvent):
		return problem.New(http.StatusBadRequest, problem.CodeUnknownEvent, err.Error())
	case err != nil:
		return web.DecodeProblem(err)
	}
	e := store.Event{ID: uuid.NewString(), WorkspaceID: ev.WorkspaceID, Type: ev.Type, Data: ev.Data, CreatedAt: in.now(),
		TraceParent: telemetry.TraceParent(r.Context())}
	ids, err := in.store.PublishEvent(r.Context(), e)
	if err != nil {
		return err
	}
	in.events.WithLabelValues(e.Type).Inc()
	if len(ids) > 0 {
		in.notify()
	}
	telemetry.Logger(r.Context(), in.log).Info("event published", zap.String("event_id", e.ID), zap.String("event_type", e.Type),
		zap.String("workspace_id", e.WorkspaceID), zap.Int("deliveries", len(ids)), zap.Int("data_bytes", len(e.Data)))
	web.WriteJSON(w, http.StatusAccepted, Published{ID: e.ID, Deliveries: len(ids)})
	return nil
}
