// Package records serves health records: uploads that create them, the
// FHIR document that retrieves them, and the internal endpoint where parsers
// attach what they found.
//
// A record is created by an upload with status "pending" (the file is
// stored; its document is retrievable at once with a preliminary
// Composition). Parser results make it "parsed" (final, then amended).
package records

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/blob"
	"github.com/health-data-connect/hdc/backend/internal/metrics"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
)

// Config configures a Handler.
type Config struct {
	Store store.Records
	// Audit keeps the trail of retrievals, which change nothing to record
	// them with (uploads and submissions are recorded by Store, with the
	// change).
	Audit store.AuditAppender
	Blobs blob.Store
	// UploadLimit is the largest file accepted, in bytes.
	UploadLimit int64
	Log         *zap.Logger
	Metrics     prometheus.Registerer
}

// Handler serves the record endpoints.
type Handler struct {
	cfg      Config
	now      func() time.Time
	problems *web.Problems

	upload, retrieve, addResources http.Handler

	uploads     *prometheus.CounterVec
	uploadBytes prometheus.Counter
}

// New returns a Handler and registers its metrics.
func New(cfg Config) (*Handler, error) {
	h := &Handler{
		cfg:         cfg,
		now:         time.Now,
		uploads:     prometheus.NewCounterVec(metrics.Counter("uploads_total", "Uploads by body format (multipart, json) and outcome (stored or a problem code)."), []string{"format", "outcome"}),
		uploadBytes: prometheus.NewCounter(metrics.Counter("upload_bytes_total", "File bytes stored by uploads.")),
	}
	if err := metrics.Register(cfg.Metrics, h.uploads, h.uploadBytes); err != nil {
		return nil, err
	}
	h.problems = &web.Problems{
		Known: web.ErrorMap{{Err: store.ErrNotFound, Problem: web.NotFound()}},
		Log:   cfg.Log,
	}
	h.upload = h.problems.Handler("upload", h.serveUpload)
	h.retrieve = h.problems.Handler("retrieve", h.serveRetrieve)
	h.addResources = h.problems.Handler("resources", h.serveAddResources)
	return h, nil
}

// Upload serves POST /mr/api/v2/docs: a multipart form with a "file" part,
// or the JSON object {"file": "<base64>"}.
func (h *Handler) Upload(w http.ResponseWriter, r *http.Request) { h.upload.ServeHTTP(w, r) }

// Retrieve serves GET /health/api/v1/fhir/retrieve?identifier=<care_context_id>.
func (h *Handler) Retrieve(w http.ResponseWriter, r *http.Request) { h.retrieve.ServeHTTP(w, r) }

// AddResources serves the internal POST
// /internal/v1/records/{care_context_id}/resources.
func (h *Handler) AddResources(w http.ResponseWriter, r *http.Request) {
	h.addResources.ServeHTTP(w, r)
}
