package adminapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/health-data-connect/hdc/internal/problem"
)

// ContentTypeNDJSON is the media type of an export: FHIR resources, one
// JSON object a line.
const ContentTypeNDJSON = "application/fhir+ndjson"

// AuditQuery selects records of the audit trails, for a search (a page at
// a time) and an export, by the parameters of GET /admin/v1/audit-events
// as the API takes them: workspace (when Scoped: the one trail read, ""
// the installation's; else every trail), agent (a client id or a person's
// name), entity, action, since and until (a date, 2006-01-02 in UTC, or an
// RFC 3339 time; a date as until means up to the end of that day), order
// (Newest: every trail's records together, newest first, AuditNewest;
// else the trails in workspace order, each oldest first, AuditOldest),
// cursor, and
// limit (a search's page size, or the most records an export writes; 0:
// the default, every record for an export). The backend reads them as the
// trail's search does, and refuses what it refuses.
type AuditQuery struct {
	Workspace string
	Scoped    bool
	Agent     string
	Entity    string
	Action    string
	Since     string
	Until     string
	Newest    bool
	Cursor    string
	Limit     int
}

// The orders of an audit search, the values of its parameter order.
const (
	AuditOldest = "oldest"
	AuditNewest = "newest"
)

// Values returns q as query parameters.
func (q AuditQuery) Values() url.Values {
	order := ""
	if q.Newest {
		order = AuditNewest
	}
	v := values("agent", q.Agent, "entity", q.Entity, "action", q.Action, "since", q.Since, "until", q.Until,
		"order", order, "cursor", q.Cursor, "limit", limitValue(q.Limit))
	if q.Scoped {
		v.Set("workspace", q.Workspace)
	}
	return v
}

// AuditPage is a page of the audit search: each record as its canonical
// form with its link ("hash") added as its last member, as the trail
// holds it, so that a reader may check it.
type AuditPage = Page[json.RawMessage]

// AuditReport is a verification of every trail.
type AuditReport struct {
	// Trails are the trails in workspace order, then those a checkpoint
	// saw that are missing.
	Trails []TrailStatus `json:"trails"`
	// Checkpoint is the checkpoint verified against, nil for none: then a
	// deleted tail of a trail, with its head moved back, or a whole trail
	// deleted, does not show.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
}

// Err returns the first break of r as an error naming its trail, seq and
// reason; nil when every trail verifies.
func (r AuditReport) Err() error {
	for _, s := range r.Trails {
		if s.Status == TrailBroken {
			return fmt.Errorf("the audit trail of %s breaks at record %d: %s", trailName(s.Workspace), s.Seq, s.Reason)
		}
	}
	return nil
}

// trailName names a workspace's trail for a person.
func trailName(ws string) string {
	if ws == "" {
		return "the installation (workspace \"\")"
	}
	return "workspace " + strconv.Quote(ws)
}

// TrailStatus is one trail as the verification found it.
type TrailStatus struct {
	Workspace string `json:"workspace"`
	// First and Last are the seqs of the chain's first and last records
	// (First is 0 for an empty chain).
	First  int64  `json:"first"`
	Last   int64  `json:"last"`
	Status string `json:"status"` // TrailOK or TrailBroken
	// Seq and Reason name a broken chain's first break.
	Seq    int64  `json:"seq,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// The statuses of a trail.
const (
	TrailOK     = "ok"
	TrailBroken = "broken"
)

// AsNoCheckpoint returns err's problem when it is no_checkpoint (the
// checkpoints' bucket holds none yet: the trails were verified without
// one, and VerifyAudit's report holds them), however it came, else nil.
func AsNoCheckpoint(err error) *problem.Problem {
	var p *problem.Problem
	if errors.As(err, &p) && p.Code == problem.CodeNoCheckpoint {
		return p
	}
	return nil
}
