package adminapi

import "time"

// Backend is a backend as its heartbeats describe it.
type Backend struct {
	ID        string    `json:"id"`      // made at random when the process started
	Host      string    `json:"host"`    // the host name
	Version   string    `json:"version"` // the build
	Address   string    `json:"address"` // the internal listener's address
	StartedAt time.Time `json:"started_at"`
	LastSeen  time.Time `json:"last_seen"`
	// Current: its last heartbeat is within three of its intervals.
	Current bool `json:"current"`
	// LeavesAt is when it leaves the fleet's view unless it beats again.
	LeavesAt time.Time `json:"leaves_at"`
}

// Edge is an edge as its last report described it.
type Edge struct {
	ID string `json:"id"` // the edge's instance id, made when it started
	// Name and Serial are the subject's common name and the serial number
	// (hexadecimal) of its client certificate; empty without the hop's
	// TLS.
	Name   string `json:"name"`
	Serial string `json:"serial"`
	// AppliedSeq is the number of the last key plane change the edge
	// applied, as of its last report, and Lag how many numbers that is
	// behind the newest now.
	AppliedSeq int64 `json:"applied_seq"`
	Lag        int64 `json:"lag"`
	// LastContact is when a backend took its last report, and Source the
	// address it came from.
	LastContact time.Time `json:"last_contact"`
	Source      string    `json:"source"`
	// Current: its last report is within three of its intervals.
	Current bool `json:"current"`
	// LeavesAt is when it leaves the fleet's view unless it reports
	// again.
	LeavesAt time.Time `json:"leaves_at"`
}

// FleetStatus is what the alert rules watch besides the backends and the
// edges: the webhook outbox's depth and its oldest pending delivery, and
// the newest audit checkpoint.
type FleetStatus struct {
	Outbox OutboxStatus `json:"outbox"`
	// Checkpoint is the newest audit checkpoint, null when the backends
	// write none to a bucket, or none yet.
	Checkpoint *Checkpoint `json:"checkpoint"`
}

// OutboxStatus is the webhook outbox's queue: the pending deliveries of
// active subscriptions, and when the oldest was created (null for none).
type OutboxStatus struct {
	Pending         int64      `json:"pending"`
	OldestPendingAt *time.Time `json:"oldest_pending_at"`
}

// Checkpoint is an audit checkpoint: its time, and its bucket's URL
// without credentials.
type Checkpoint struct {
	At    time.Time `json:"at"`
	Where string    `json:"where"`
}
