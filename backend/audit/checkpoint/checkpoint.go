// Package checkpoint writes the heads of every audit trail, signed,
// outside the database at an interval and when the backend stops, and
// reads them back for hdc audit verify: a writer of the database who
// deletes the last records of a trail and moves its head back, or deletes
// a whole trail with its head, leaves the chain consistent, and only what
// was seen outside the database shows the loss.
//
// A checkpoint is signed with an HMAC-SHA-256 under a key the store's data
// key derives (package sealed): whoever can write the database cannot
// write a checkpoint that verifies.
//
// Destinations are named by URL: a gocloud.dev/blob bucket (file:///dir,
// s3://bucket?region=…, with an optional prefix=), where each checkpoint is
// an object of its own and the newest is read back, or "log", one line in
// the backend's log, for a log kept elsewhere (hdc audit verify cannot
// read it).
package checkpoint

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
)

// format is the version of the checkpoint form.
const format = 1

// ErrSignature is a checkpoint whose signature does not verify: altered,
// or not signed with this store's data key.
var ErrSignature = errors.New("checkpoint: the checkpoint's signature does not verify")

// Checkpoint is where every trail stood at a time.
type Checkpoint struct {
	V  int       `json:"v"`
	At time.Time `json:"at"`
	// Replica names the process that wrote it.
	Replica string  `json:"replica"`
	Trails  []Trail `json:"trails"`
	// MAC signs the rest: the HMAC-SHA-256, in hex, of the checkpoint's
	// JSON with MAC empty.
	MAC string `json:"mac"`
}

// Trail is the head of one trail: its last record, that record's link,
// and its time (left out by the checkpoints of versions that did not
// write it, and for an empty trail).
type Trail struct {
	Workspace string     `json:"workspace"`
	Seq       int64      `json:"seq"`
	Link      string     `json:"link"`
	At        *time.Time `json:"at,omitempty"`
}

// Head is a trail's head with the time of its last record.
type Head struct {
	audit.Head
	At time.Time // zero for an empty trail
}

// New returns the checkpoint of heads at at, signed with key.
func New(heads []Head, at time.Time, replica string, key []byte) Checkpoint {
	c := Checkpoint{V: format, At: at.UTC(), Replica: replica, Trails: make([]Trail, 0, len(heads))}
	for _, h := range heads {
		t := Trail{Workspace: h.Workspace, Seq: h.Last.Seq, Link: h.Last.Hash.String()}
		if !h.At.IsZero() {
			recorded := h.At.UTC()
			t.At = &recorded
		}
		c.Trails = append(c.Trails, t)
	}
	c.MAC = hex.EncodeToString(c.sum(key))
	return c
}

// sum is the HMAC of c without its MAC.
func (c Checkpoint) sum(key []byte) []byte {
	c.MAC = ""
	b, err := json.Marshal(c)
	if err != nil {
		panic("checkpoint: " + err.Error()) // strings, integers and a time always encode
	}
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return m.Sum(nil)
}

// Parse reads a checkpoint and verifies its signature with key.
func Parse(b []byte, key []byte) (Checkpoint, error) {
	var c Checkpoint
	if err := json.Unmarshal(b, &c); err != nil || c.V != format {
		return Checkpoint{}, errors.New("checkpoint: not a checkpoint")
	}
	mac, err := hex.DecodeString(c.MAC)
	if err != nil || !hmac.Equal(mac, c.sum(key)) {
		return Checkpoint{}, ErrSignature
	}
	return c, nil
}

// Seen is the record of a trail a checkpoint saw, and its time when the
// checkpoint says it.
type Seen struct {
	audit.Link
	At time.Time
}

// Seen returns, by workspace, the record of each trail the checkpoint saw.
func (c Checkpoint) Seen() (map[string]Seen, error) {
	seen := make(map[string]Seen, len(c.Trails))
	for _, t := range c.Trails {
		b, err := hex.DecodeString(t.Link)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: trail %q: %w", t.Workspace, err)
		}
		h, err := audit.HashFrom(b)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: trail %q: %w", t.Workspace, err)
		}
		s := Seen{Link: audit.Link{Seq: t.Seq, Hash: h}}
		if t.At != nil {
			s.At = *t.At
		}
		seen[t.Workspace] = s
	}
	return seen, nil
}
