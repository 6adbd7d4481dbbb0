package store

import (
	"context"
	"errors"
	"time"
)

// ErrOtherEdge is ReportEdge's error for a report that names the instance
// of an edge of another certificate's name; nothing was changed.
var ErrOtherEdge = errors.New("store: the instance is another certificate's")

// Fleet is what the processes of a deployment tell the store of
// themselves: each backend's heartbeat, and each edge's reports with the
// kids it used. Each report raises the last use of the keys it names
// (ClientKey.LastUsedAt), so that a key's last use is the latest of every
// edge's.
type Fleet interface {
	// BeatBackend records b's heartbeat, in one transaction: its row, by
	// b.ID, inserted or replaced, and the rows of other backends at b's
	// Host and Address (earlier processes there) removed.
	BeatBackend(ctx context.Context, b FleetBackend) error
	// ReportEdge records an edge's report, in one transaction: e's row, by
	// its ID, inserted or replaced, and the rows of other instances of
	// e's Name from e's Source (earlier processes there) removed; and the
	// last use of each key of uses raised to the use's time, never
	// lowered, in one statement, a key's change number staying as it is
	// and a kid of no key skipped. An ID whose row has another Name is
	// refused with ErrOtherEdge, and nothing is changed.
	ReportEdge(ctx context.Context, e FleetEdge, uses []KeyUse) error
	// ListBackends returns the backends' rows, by ID.
	ListBackends(ctx context.Context) ([]FleetBackend, error)
	// ListEdges returns the edges' rows, by ID.
	ListEdges(ctx context.Context) ([]FleetEdge, error)
	// ForgetFleet removes the rows of the backends and edges last heard
	// from before before, and returns how many it removed.
	ForgetFleet(ctx context.Context, before time.Time) (int64, error)
}

// FleetBackend is a backend process as its last heartbeat described it.
type FleetBackend struct {
	ID        string // random, made when the process started
	Host      string // the host name
	Version   string // the build (internal/version)
	Address   string // the internal listener's address
	StartedAt time.Time
	LastSeen  time.Time
}

// FleetEdge is an edge as its last report described it.
type FleetEdge struct {
	ID string // the edge's instance id, made when it started
	// Name and Serial are the subject's common name and the serial number
	// (hexadecimal) of its client certificate; both empty without the
	// hop's TLS.
	Name, Serial string
	// AppliedSeq is the number of the last key plane change it applied.
	AppliedSeq int64
	// LastContact is when the backend took its last report, by the
	// backend's clock; Source is the address it came from.
	LastContact time.Time
	Source      string
}

// KeyUse is a kid's last use at an edge.
type KeyUse struct {
	Kid string
	At  time.Time
}
