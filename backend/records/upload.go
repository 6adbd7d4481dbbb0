package records

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/upload"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// knownTasks are the tasks an upload may ask for, in canonical order.
var knownTasks = []string{"smart", "pii", "classification"}

// defaultTitle names a file that came without a name.
const defaultTitle = "Uploaded file"

// UploadResponse is the answer of an upload.
type UploadResponse struct {
	DocumentID    string `json:"document_id"`
	CareContextID string `json:"care_context_id"`
	// Status is the record's status: "pending" until parser results arrive.
	Status store.RecordStatus `json:"status"`
}

// source is the file of an upload request, as it streams in.
type source struct {
	format   string // multipart or json, for metrics
	r        io.Reader
	title    string
	declared string // the content type the client declared, if any
}

func (h *Handler) serveUpload(w http.ResponseWriter, r *http.Request) (err error) {
	src := source{format: "unsupported"}
	defer func() { h.countUpload(src.format, err) }()
	tasks, p := parseTasks(r.URL.RawQuery)
	if p != nil {
		return p
	}
	if src, err = h.openSource(w, r); err != nil {
		return err
	}
	f, err := upload.Receive(r.Context(), h.cfg.Blobs, src.r, h.cfg.UploadLimit, src.declared)
	if se := (*upload.SourceError)(nil); errors.As(err, &se) {
		return uploadProblem(err, h.cfg.UploadLimit)
	}
	if err != nil {
		return err
	}
	caller, _ := web.CallerFrom(r.Context())
	rec, err := h.createRecord(r.Context(), caller, f, src.title, tasks, web.AuditEvent(r))
	if err != nil {
		return err
	}
	h.uploadBytes.Add(float64(f.Size))
	telemetry.Logger(r.Context(), h.cfg.Log).Info("record created", zap.String("client_id", caller.ClientID), zap.String("workspace_id", caller.WorkspaceID),
		zap.String("document_id", rec.ID), zap.Int64("size", f.Size), zap.String("content_type", f.ContentType),
		zap.Strings("tasks", tasks))
	web.WriteJSON(w, http.StatusOK, UploadResponse{DocumentID: rec.ID, CareContextID: rec.CareContextID, Status: rec.Status})
	return nil
}

// countUpload counts an upload by format and outcome: stored, or the code
// of the problem that answered it.
func (h *Handler) countUpload(format string, err error) {
	outcome := "stored"
	if err != nil {
		p, _ := h.problems.Of(err)
		outcome = p.Code
	}
	h.uploads.WithLabelValues(format, outcome).Inc()
}

// openSource returns the file of a multipart or JSON upload, its body
// capped for the upload limit.
func (h *Handler) openSource(w http.ResponseWriter, r *http.Request) (source, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "multipart/form-data":
		src := source{format: "multipart", title: defaultTitle}
		r.Body = http.MaxBytesReader(w, r.Body, h.cfg.UploadLimit+1<<20)
		mr, err := r.MultipartReader()
		if err != nil {
			return src, problem.New(http.StatusBadRequest, problem.CodeInvalidUpload, "malformed multipart form")
		}
		part, err := upload.MultipartFile(mr)
		if err != nil {
			return src, uploadProblem(err, h.cfg.UploadLimit)
		}
		src.r, src.declared = part, part.ContentType
		if part.Name != "" {
			src.title = part.Name
		}
		return src, nil
	case "application/json":
		r.Body = http.MaxBytesReader(w, r.Body, MaxJSONUploadBody(h.cfg.UploadLimit))
		return source{format: "json", r: upload.JSONFile(r.Body), title: defaultTitle}, nil
	}
	return source{format: "unsupported"}, web.UnsupportedMedia(mt, "multipart/form-data or application/json")
}

// createRecord stores the record of a received file, with its audit
// record (e, the request's).
func (h *Handler) createRecord(ctx context.Context, caller web.Caller, f upload.File, title string, tasks []string, e audit.Event) (store.Record, error) {
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
	e.At, e.Action, e.Outcome = now, audit.RecordUpload, audit.Success
	e.Entity = audit.Entity{Kind: audit.EntityCareContext, ID: rec.CareContextID}
	err := h.cfg.Store.CreateRecord(ctx, rec, e)
	if errors.Is(err, store.ErrNotFound) {
		return rec, web.UnknownCaller()
	}
	return rec, err
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
	for _, t := range q["task"] {
		if !slices.Contains(knownTasks, t) {
			return nil, problem.New(http.StatusBadRequest, problem.CodeInvalidTask, "task must be one of smart, pii, classification")
		}
	}
	var tasks []string
	for _, t := range knownTasks {
		if slices.Contains(q["task"], t) {
			tasks = append(tasks, t)
		}
	}
	return tasks, nil
}

// uploadProblem maps a failure of the client's side of an upload; limit
// is the upload limit, which a file too large is told.
func uploadProblem(err error, limit int64) *problem.Problem {
	var (
		tooLarge *http.MaxBytesError
		bad      *upload.Error
	)
	switch {
	case errors.Is(err, upload.ErrTooLarge), errors.As(err, &tooLarge):
		return web.TooLarge("the file exceeds the upload limit of " + strings.ReplaceAll(humanize.IBytes(uint64(limit)), " ", ""))
	case errors.Is(err, upload.ErrEnvelope):
		return problem.New(http.StatusBadRequest, problem.CodeInvalidUpload, web.ErrPlainEnvelope.Detail)
	case errors.As(err, &bad):
		return problem.New(http.StatusBadRequest, problem.CodeInvalidUpload, bad.Error())
	}
	return problem.New(http.StatusBadRequest, problem.CodeInvalidUpload, "the upload could not be read")
}
