package store

import (
	"context"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
)

// Records are uploaded documents and the resources parsers attach (package records).
type Records interface {
	// CreateRecord stores r; ErrNotFound when its workspace does not exist,
	// ErrConflict when its id or care context id is taken.
	// It appends e (the upload) to the audit trail in the same transaction.
	CreateRecord(ctx context.Context, r Record, e audit.Event) error
	// GetRecord returns the workspace's record with this care context id, or
	// ErrNotFound (also when the record belongs to another workspace).
	GetRecord(ctx context.Context, workspaceID, careContextID string) (Record, error)
	// AddRecordResources appends resources to the record with this care
	// context id, with their Aliases, marks it parsed, increments its
	// version and sets its UpdatedAt to now, atomically. It returns the
	// updated record, or ErrNotFound. Resources get Seq numbers after the
	// existing ones. ErrConflict when an alias is already the record's (a
	// record's aliases are unique); nothing is stored then.
	// It appends e (the submission) to the trail of the record's workspace
	// (AuditIn) in the same transaction.
	AddRecordResources(ctx context.Context, careContextID string, resources []Resource, now time.Time, e audit.Event) (Record, error)
	// RecordAliases returns the aliases of the resources of the record
	// with this care context id, each mapped to its resource's ID, or
	// ErrNotFound when there is no such record.
	RecordAliases(ctx context.Context, careContextID string) (map[string]string, error)
	// ListRecordResources returns the resources of a record the caller
	// already read (with GetRecord), in Seq order.
	ListRecordResources(ctx context.Context, recordID string) ([]Resource, error)
}

// RecordStatus is the processing state of a record.
type RecordStatus string

// Record statuses.
const (
	// RecordPending: the file is stored and no parser results arrived yet.
	RecordPending RecordStatus = "pending"
	// RecordParsed: parser results are attached.
	RecordParsed RecordStatus = "parsed"
)

// Record is an uploaded document and what parsers found in it.
type Record struct {
	// ID is the document id returned by the upload.
	ID            string
	CareContextID string
	WorkspaceID   string
	ClientID      string
	// BlobKey is the content address (hex SHA-256) of the file.
	BlobKey string
	// SHA1 is the file's SHA-1, which FHIR's Attachment.hash carries.
	SHA1        []byte
	Size        int64
	ContentType string
	Title       string
	Tasks       []string
	Status      RecordStatus
	// Version counts changes: 1 at upload, plus one per batch of resources.
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Resource is one FHIR resource a parser attached to a record.
type Resource struct {
	RecordID string
	Seq      int64
	// ResourceType and ID repeat the resource's members for queries.
	ResourceType string
	ID           string
	// JSON is the resource, already carrying ID.
	JSON []byte
	// Aliases are the references by which the parser's submission named
	// the resource (its entry's fullUrl, "Type/id"), which later
	// submissions for the record may use. AddRecordResources stores them;
	// ListRecordResources does not read them back (RecordAliases does).
	Aliases []string
}
