package trail

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/checkpoint"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/redact"
)

// Status is one trail's verification.
type Status struct {
	Workspace string `json:"workspace"`
	// First and Last are the seqs of the chain's first and last records
	// (First is 0 for an empty chain).
	First  int64  `json:"first"`
	Last   int64  `json:"last"`
	Status string `json:"status"` // "ok" or "broken"
	// Seq and Reason name a broken chain's first break.
	Seq    int64  `json:"seq,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// The statuses of a trail.
const (
	StatusOK     = "ok"
	StatusBroken = "broken"
)

// Checkpointed is the checkpoint a verification was held to: its time,
// and its bucket's URL without credentials.
type Checkpointed struct {
	At    time.Time `json:"at"`
	Where string    `json:"where"`
}

// Report is a verification of every trail.
type Report struct {
	// Trails are the trails in workspace order, then those a checkpoint
	// saw that are missing.
	Trails []Status `json:"trails"`
	// Checkpoint is the checkpoint verified against, nil for none: then a
	// deleted tail of a trail, with its head moved back, or a whole trail
	// deleted, does not show.
	Checkpoint *Checkpointed `json:"checkpoint,omitempty"`
}

// Err returns the first break of r as an error naming its trail, seq and
// reason; nil when every trail verifies.
func (r Report) Err() error {
	for _, s := range r.Trails {
		if s.Status == StatusBroken {
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

// NoCheckpoint returns the problem Verify answers when the checkpoints'
// bucket, where (without credentials), holds none yet: 409 no_checkpoint.
func NoCheckpoint(where string) *problem.Problem {
	return problem.New(http.StatusConflict, problem.CodeNoCheckpoint, fmt.Sprintf("no checkpoint in %s yet: the trails' chains were verified, "+
		"not against a checkpoint; a deleted tail or a whole trail deleted shows once the backends have written the first", where))
}

// AsNoCheckpoint returns err's problem when it is NoCheckpoint's, however
// it came (from Verify, or from the Admin API), else nil.
func AsNoCheckpoint(err error) *problem.Problem {
	var p *problem.Problem
	if errors.As(err, &p) && p.Code == problem.CodeNoCheckpoint {
		return p
	}
	return nil
}

// Verify verifies every trail's chain: every record present, unaltered
// and in order from the last one retention removed to the head, each
// prune within the retention, and every trail the newest checkpoint saw
// still there and holding the record it saw. A break is in the report,
// not an error. When the checkpoints' bucket holds none yet, it verifies
// the chains alone and returns their report with the problem
// NoCheckpoint. It records the verification for the person of ctx before
// it answers.
func (s *Service) Verify(ctx context.Context) (Report, error) {
	seen, at, err := s.checkpointed(ctx)
	none := errors.Is(err, checkpoint.ErrNone)
	if err != nil && !none {
		return Report{}, err
	}
	r := Report{Trails: []Status{}, Checkpoint: at}
	heads, err := s.st.AuditHeads(ctx)
	if err != nil {
		return Report{}, err
	}
	missing := maps.Clone(seen)
	for _, h := range heads {
		delete(missing, h.Workspace)
		st, err := s.verifyTrail(ctx, h, seen[h.Workspace])
		if err != nil {
			return Report{}, err
		}
		r.Trails = append(r.Trails, st)
	}
	for _, ws := range slices.Sorted(maps.Keys(missing)) {
		if missing[ws].Seq == 0 {
			continue // seen empty: nothing was lost
		}
		r.Trails = append(r.Trails, Status{Workspace: ws, Status: StatusBroken, Seq: 1,
			Reason: fmt.Sprintf("the trail is missing: a checkpoint saw it reach record %d", missing[ws].Seq)})
	}
	if err := s.recordRead(ctx, audit.AuditVerify, Query{}); err != nil {
		return Report{}, err
	}
	if none {
		return r, NoCheckpoint(redact.URL(s.cfg.Checkpoints))
	}
	return r, nil
}

// LastCheckpoint returns the newest checkpoint's time and bucket, nil
// when none is written to a bucket, or none yet. Reading it is not
// reading the trail: it is not recorded.
func (s *Service) LastCheckpoint(ctx context.Context) (*Checkpointed, error) {
	_, at, err := s.checkpointed(ctx)
	if errors.Is(err, checkpoint.ErrNone) {
		return nil, nil
	}
	return at, err
}

// checkpointed returns what the newest checkpoint saw of each trail, and
// which checkpoint that is; nothing when there is none to read, and
// checkpoint.ErrNone when the bucket holds none yet.
func (s *Service) checkpointed(ctx context.Context) (map[string]checkpoint.Seen, *Checkpointed, error) {
	url := s.cfg.Checkpoints
	if url == "" || url == checkpoint.Log {
		return nil, nil, nil
	}
	c, err := checkpoint.Latest(ctx, url, s.cfg.CheckpointKey)
	if err != nil {
		return nil, nil, fmt.Errorf("the audit checkpoints: %w", err)
	}
	seen, err := c.Seen()
	return seen, &Checkpointed{At: c.At, Where: redact.URL(url)}, err
}

// verifyTrail verifies the chain of h against what a checkpoint saw of it.
func (s *Service) verifyTrail(ctx context.Context, h audit.Head, seen checkpoint.Seen) (Status, error) {
	err := s.verifyChain(ctx, &h, store.AuditCheck{Seen: seen.Link, SeenAt: seen.At, Retention: s.cfg.Retention})
	st := Status{Workspace: h.Workspace, Last: h.Last.Seq, Status: StatusOK}
	if h.Last.Seq > h.Pruned.Seq {
		st.First = h.Pruned.Seq + 1
	}
	var b *audit.Break
	if errors.As(err, &b) {
		st.Status, st.Seq, st.Reason = StatusBroken, b.Seq, b.Reason
		return st, nil
	}
	return st, err
}

// verifyChain verifies the chain of *h against c. A break found while
// retention pruned the chain may only be the prune's doing: then it reads
// the head again (into *h) and verifies once more.
func (s *Service) verifyChain(ctx context.Context, h *audit.Head, c store.AuditCheck) error {
	err := store.VerifyAudit(ctx, s.st, *h, c)
	var b *audit.Break
	if !errors.As(err, &b) {
		return err
	}
	heads, herr := s.st.AuditHeads(ctx)
	if herr != nil {
		return err
	}
	for _, now := range heads {
		if now.Workspace == h.Workspace && now.Pruned != h.Pruned {
			*h = now
			return store.VerifyAudit(ctx, s.st, now, c)
		}
	}
	return err
}
