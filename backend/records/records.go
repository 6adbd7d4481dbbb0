// Package records serves health records: uploads that create them, the
// FHIR document that retrieves them, and the internal endpoint where parsers
// attach what they found.
//
// A record is created by an upload with status "pending" (the file is
// stored; its document is retrievable at once with a preliminary
// Composition). Parser results make it "parsed" (final, then amended).
package records

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/blob"
	"github.com/health-data-connect/hdc/backend/fhir"
	"github.com/health-data-connect/hdc/backend/internal/metrics"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/upload"
	"github.com/health-data-connect/hdc/internal/problem"
)

// knownTasks are the tasks an upload may ask for, in canonical order.
var knownTasks = []string{"smart", "pii", "classification"}

// MaxResourcesBody caps a parser's submission.
const MaxResourcesBody = 16 << 20

// defaultTitle names a file that came without a name.
const defaultTitle = "Uploaded file"

// Config configures a Handler.
type Config struct {
	Store store.Records
	Blobs blob.Store
	// UploadLimit is the largest file accepted, in bytes.
	UploadLimit int64
	Log         *zap.Logger
	Metrics     prometheus.Registerer
}

// Handler serves the record endpoints.
type Handler struct {
	cfg Config
	now func() time.Time

	uploads     *prometheus.CounterVec
	uploadBytes prometheus.Counter
}

// New returns a Handler and registers its metrics.
func New(cfg Config) (*Handler, error) {
	h := &Handler{
		cfg: cfg,
		now: time.Now,
		uploads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hdc_backend_uploads_total",
			Help: "Uploads by body format (multipart, json) and outcome (stored or a problem code).",
		}, []string{"format", "outcome"}),
		uploadBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hdc_backend_upload_bytes_total",
			Help: "File bytes stored by uploads.",
		}),
	}
	if err := metrics.Register(cfg.Metrics, h.uploads, h.uploadBytes); err != nil {
		return nil, err
	}
	return h, nil
}

// UploadResponse is the answer of an upload.
type UploadResponse struct {
	DocumentID    string `json:"document_id"`
	CareContextID string `json:"care_context_id"`
	// Status is the record's status: "pending" until parser results arrive.
	Status store.RecordStatus `json:"status"`
}

// Upload serves POST /mr/api/v2/docs: a multipart form with a "file" part,
// or the JSON object {"file": "<base64>"}.
func (h *Handler) Upload(w http.ResponseWriter, r *http.Request) {
	caller, _ := web.CallerFrom(r.Context())
	format := "unsupported"
	fail := func(p *problem.Problem) {
		h.uploads.WithLabelValues(format, p.Code).Inc()
		problem.Write(w, p)
	}
	tasks, p := parseTasks(r.URL.RawQuery)
	if p != nil {
		fail(p)
		return
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var (
		src      io.Reader
		title    = defaultTitle
		declared string
	)
	switch mt {
	case "multipart/form-data":
		format = "multipart"
		r.Body = http.MaxBytesReader(w, r.Body, h.cfg.UploadLimit+1<<20)
		mr, err := r.MultipartReader()
		if err != nil {
			fail(problem.New(http.StatusBadRequest, problem.CodeInvalidUpload, "malformed multipart form"))
			return
		}
		part, err := upload.MultipartFile(mr)
		if err != nil {
			fail(uploadProblem(err))
			return
		}
		src, declared = part, part.ContentType
		if part.Name != "" {
			title = part.Name
		}
	case "application/json":
		format = "json"
		r.Body = http.MaxBytesReader(w, r.Body, MaxJSONUploadBody(h.cfg.UploadLimit))
		src = upload.JSONFile(r.Body)
	default:
		fail(problem.New(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMedia,
			"Content-Type must be multipart/form-data or application/json"))
		return
	}

	f, err := upload.Receive(r.Context(), h.cfg.Blobs, src, h.cfg.UploadLimit, declared)
	if err != nil {
		var se *upload.SourceError
		if !errors.As(err, &se) {
			h.cfg.Log.Error("storing an upload failed", zap.Error(err))
			fail(web.Internal())
			return
		}
		fail(uploadProblem(err))
		return
	}
	now := h.now()
	rec := store.Record{
		ID:            uuid.NewString(),
		CareContextID: uuid.NewString(),
		WorkspaceID:   caller.WorkspaceID,
		ClientID:      caller.ClientID,
		BlobKey:       f.Key,
		SHA1:          f.SHA1,
		Size:          f.Size,
		ContentType:   f.ContentType,
		Title:         title,
		Tasks:         tasks,
		Status:        store.RecordPending,
		Version:       1,
		CreatedAt:     now,
		UpdatedAt:     now,
	}
	switch err := h.cfg.Store.CreateRecord(r.Context(), rec); {
	case errors.Is(err, store.ErrNotFound):
		fail(web.UnknownCaller())
		return
	case err != nil:
		h.cfg.Log.Error("creating a record failed", zap.Error(err))
		fail(web.Internal())
		return
	}
	h.uploads.WithLabelValues(format, "stored").Inc()
	h.uploadBytes.Add(float64(f.Size))
	h.cfg.Log.Info("record created", zap.String("client_id", caller.ClientID), zap.String("workspace_id", caller.WorkspaceID),
		zap.String("document_id", rec.ID), zap.Int64("size", f.Size), zap.String("content_type", f.ContentType),
		zap.Strings("tasks", tasks))
	web.WriteJSON(w, http.StatusOK, UploadResponse{DocumentID: rec.ID, CareContextID: rec.CareContextID, Status: rec.Status})
}

// MaxJSONUploadBody bounds the body of a JSON upload of a limit-byte file:
// its base64 text with every character written as a six-byte \u escape,
// plus room for whitespace.
func MaxJSONUploadBody(limit int64) int64 {
	return (limit+2)/3*4*6 + 64<<10
}

// parseTasks reads the repeatable task query parameter: known names only,
// returned once each in canonical order.
func parseTasks(rawQuery string) ([]string, *problem.Problem) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, web.BadRequest("malformed query string")
	}
	var tasks []string
	for _, t := range q["task"] {
		if !slices.Contains(knownTasks, t) {
			return nil, problem.New(http.StatusBadRequest, problem.CodeInvalidTask, "task must be one of smart, pii, classification")
		}
	}
	for _, t := range knownTasks {
		if slices.Contains(q["task"], t) {
			tasks = append(tasks, t)
		}
	}
	return tasks, nil
}

// uploadProblem maps a failure of the client's side of an upload.
func uploadProblem(err error) *problem.Problem {
	var (
		tooLarge *http.MaxBytesError
		bad      *upload.Error
	)
	switch {
	case errors.Is(err, upload.ErrTooLarge), errors.As(err, &tooLarge):
		return web.TooLarge("the file exceeds the upload limit")
	case errors.As(err, &bad):
		return problem.New(http.StatusBadRequest, problem.CodeInvalidUpload, bad.Error())
	}
	return problem.New(http.StatusBadRequest, problem.CodeInvalidUpload, "the upload could not be read")
}

// Retrieve serves GET /health/api/v1/fhir/retrieve?identifier=<care_context_id>.
func (h *Handler) Retrieve(w http.ResponseWriter, r *http.Request) {
	caller, _ := web.CallerFrom(r.Context())
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil || len(q["identifier"]) != 1 || q.Get("identifier") == "" {
		problem.Write(w, web.BadRequest("the query parameter identifier (a care_context_id) is required once"))
		return
	}
	rec, err := h.cfg.Store.GetRecord(r.Context(), caller.WorkspaceID, q.Get("identifier"))
	if errors.Is(err, store.ErrNotFound) {
		problem.Write(w, web.NotFound())
		return
	}
	if err != nil {
		h.cfg.Log.Error("reading a record failed", zap.Error(err))
		problem.Write(w, web.Internal())
		return
	}
	resources, err := h.cfg.Store.ListRecordResources(r.Context(), rec.ID)
	if err != nil {
		h.cfg.Log.Error("reading record resources failed", zap.Error(err))
		problem.Write(w, web.Internal())
		return
	}
	doc, err := fhir.Document(rec, resources)
	if err != nil {
		h.cfg.Log.Error("assembling a document failed", zap.Error(err))
		problem.Write(w, web.Internal())
		return
	}
	web.WriteJSONBytes(w, http.StatusOK, doc)
}

// ResourcesResponse is the answer to a parser's submission.
type ResourcesResponse struct {
	CareContextID string             `json:"care_context_id"`
	Status        store.RecordStatus `json:"status"`
	Version       int64              `json:"version"`
	// ResourceIDs are the ids given to the submitted resources, in order.
	ResourceIDs []string `json:"resource_ids"`
}

// AddResources serves the internal POST
// /internal/v1/records/{care_context_id}/resources.
func (h *Handler) AddResources(w http.ResponseWriter, r *http.Request) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/json" && mt != "application/fhir+json" {
		problem.Write(w, problem.New(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMedia,
			"Content-Type must be application/json or application/fhir+json"))
		return
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxResourcesBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			problem.Write(w, web.TooLarge("parser results are limited to 16 MiB"))
			return
		}
		problem.Write(w, web.BadRequest("the body could not be read"))
		return
	}
	cc := r.PathValue("care_context_id")
	// References may name the resources of earlier submissions by their
	// aliases. Aliases are only ever added, and are unique per record, so
	// a submission racing this one can at most make the store refuse ours.
	known, err := h.cfg.Store.RecordAliases(r.Context(), cc)
	switch {
	case errors.Is(err, store.ErrNotFound):
		problem.Write(w, web.NotFound())
		return
	case err != nil:
		h.cfg.Log.Error("reading resource aliases failed", zap.Error(err))
		problem.Write(w, web.Internal())
		return
	}
	resources, err := fhir.Ingest(data, known)
	var fe *fhir.Error
	switch {
	case errors.As(err, &fe) && fe.Conflict:
		problem.Write(w, problem.New(http.StatusConflict, problem.CodeConflict, fe.Error()))
		return
	case errors.As(err, &fe):
		problem.Write(w, problem.New(http.StatusBadRequest, problem.CodeInvalidResources, fe.Error()))
		return
	case err != nil:
		h.cfg.Log.Error("ingesting resources failed", zap.Error(err))
		problem.Write(w, web.Internal())
		return
	}
	rec, err := h.cfg.Store.AddRecordResources(r.Context(), cc, resources, h.now())
	switch {
	case errors.Is(err, store.ErrNotFound):
		problem.Write(w, web.NotFound())
		return
	case errors.Is(err, store.ErrConflict):
		problem.Write(w, problem.New(http.StatusConflict, problem.CodeConflict,
			"a resource of the submission has the identity (fullUrl or Type/id) of a resource the record already has"))
		return
	case err != nil:
		h.cfg.Log.Error("storing resources failed", zap.Error(err))
		problem.Write(w, web.Internal())
		return
	}
	ids := make([]string, len(resources))
	for i, res := range resources {
		ids[i] = res.ID
	}
	h.cfg.Log.Info("parser results stored", zap.String("document_id", rec.ID), zap.Int("resources", len(ids)),
		zap.Int64("version", rec.Version))
	web.WriteJSON(w, http.StatusOK, ResourcesResponse{CareContextID: rec.CareContextID, Status: rec.Status, Version: rec.Version, ResourceIDs: ids})
}
