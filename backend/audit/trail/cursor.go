package trail

import (
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/contract"
)

// position is where a search stands: the last record a page read (its
// trail, seq and, in a search by Newest, time), the time the search
// began, which bounds its pages, and whether it reads newest first.
type position struct {
	Workspace string `json:"w"`
	Seq       int64  `json:"s"`
	At        int64  `json:"a,omitempty"` // Unix microseconds
	Began     int64  `json:"t"`           // Unix microseconds
	Newest    bool   `json:"n,omitempty"`
}

// after is the position of the record r that a walk from p read.
func (p position) after(r audit.Record) position {
	return position{Workspace: r.Workspace, Seq: r.Seq, At: r.At.UnixMicro(), Began: p.Began, Newest: p.Newest}
}

// errCursor answers a cursor this server did not give.
var errCursor = invalid("cursor is not a cursor this server gave: pass the next member of a page as it is")

// encode returns p as an opaque cursor: its JSON in base64url.
func (p position) encode() string {
	b, _ := json.Marshal(p) // a string and integers
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodePosition reads a cursor of q's search: none is the first page, at
// now; one of another trail than a scoped search's is refused.
func decodePosition(q Query, now time.Time) (position, error) {
	if q.Cursor == "" {
		return position{Workspace: q.Workspace, Began: now.UnixMicro(), Newest: q.Newest}, nil
	}
	var p position
	b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
	if err != nil || len(b) > 512 || json.Unmarshal(b, &p) != nil || p.Seq < 0 || p.Began <= 0 || p.Newest != q.Newest ||
		p.Workspace != "" && !contract.ValidID(p.Workspace) || q.Scoped && p.Workspace != q.Workspace {
		return position{}, errCursor
	}
	return p, nil
}

// began is the time the search of p began.
func (p position) began() time.Time { return time.UnixMicro(p.Began) }
