package opscmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/audit"
	auditcheckpoint "github.com/health-data-connect/hdc/backend/audit/checkpoint"
	"github.com/health-data-connect/hdc/backend/operator"
	"github.com/health-data-connect/hdc/backend/sealed"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/redact"
)

// chainStatus is a line of verify's output.
type chainStatus struct {
	Workspace string `json:"workspace"`
	// First and Last are the seqs of the chain's first and last records
	// (First is 0 for an empty chain).
	First  int64  `json:"first"`
	Last   int64  `json:"last"`
	Status string `json:"status"` // "ok" or "broken"
	Seq    int64  `json:"seq,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func newAuditVerifyCmd(sf *storeFlags) *cobra.Command {
	var checkpoints, retention string
	cmd := &cobra.Command{
		Use:   "verify [--checkpoints URL] [--retention DURATION]",
		Short: "Verify every audit trail's chain, against the newest checkpoint; fail naming the first break",
		Long: `Verify every trail's chain (each workspace's and the installation's):
every record present, unaltered and in order from the last one retention
removed to the chain's head, each keyed record's link a MAC under the chain's
key (from the keeper, --keeper), which a writer of the database cannot
compute. Records written before the chain had a key are linked by SHA-256 and
verified so; the first keyed record after them holds their last link.

With --checkpoints (the backend's HDC_AUDIT_CHECKPOINTS: a bucket URL such
as file:///dir), the newest signed checkpoint there is verified and every
trail it saw must still be there and still hold the record it saw: this is
what shows the last records of a trail deleted with its head moved back, or
a whole trail deleted. Without it, the checkpoints hdc up writes,
<data>/audit-checkpoints, are read when they are there. Which checkpoint
was verified, or that none was and what that cannot show, is said on
standard error.

Retention removes a trail's oldest records and records that it did, with
the bound it removed them to, decided from the records' own times. A prune
record whose bound is later than its time less --retention (the backend's
HDC_AUDIT_RETENTION) removed records before their time, and so did one that
removed a record the checkpoint saw with a time at or after its bound:
both are breaks.

Prints one JSON line per trail with its status. When a trail breaks, exits
non-zero naming the first break: its workspace, the record's seq, and what
is wrong there.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			keep, err := operator.ParseRetention(retention)
			if err != nil || keep < 0 {
				return fmt.Errorf("--retention (HDC_AUDIT_RETENTION): %q is neither seconds nor a duration such as 52560h", retention)
			}
			st, err := sf.openAudit(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			seen, err := checkpointed(cmd, st, cmp.Or(checkpoints, sf.LocalCheckpoints()))
			if err != nil {
				return err
			}
			return verifyAudit(cmd.Context(), st, seen, keep, cmd.OutOrStdout())
		},
	}
	cli.EnvStringVar(cmd.Flags(), &checkpoints, "checkpoints", "HDC_AUDIT_CHECKPOINTS", "",
		"bucket `url` of the backend's audit checkpoints; log or empty: <data>/"+operator.CheckpointDir+" when it is there")
	cli.EnvStringVar(cmd.Flags(), &retention, "retention", "HDC_AUDIT_RETENTION", operator.DefaultAuditRetention.String(),
		"the backend's audit retention, a `duration`: no prune may remove a younger record")
	return cmd
}

// checkpointed returns what the newest checkpoint at url saw of each
// trail, saying on standard error which checkpoint it is; nil, with a
// warning, when there is no bucket to read.
func checkpointed(cmd *cobra.Command, st *sealed.Store, url string) (map[string]auditcheckpoint.Seen, error) {
	if url == "" || url == auditcheckpoint.Log {
		fmt.Fprintln(cmd.ErrOrStderr(), "hdc: verifying without checkpoints (--checkpoints, or <data>/"+operator.CheckpointDir+"): "+
			"the last records of a trail deleted with its head, or a whole trail deleted, do not show")
		return nil, nil
	}
	c, err := auditcheckpoint.Latest(cmd.Context(), url, st.CheckpointKey())
	if err != nil {
		return nil, fmt.Errorf("--checkpoints: %w", err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "hdc: verifying against the checkpoint of %s in %s\n", c.At.Format(time.RFC3339), redact.URL(url))
	return c.Seen()
}

// verifyAudit verifies every chain of st, and that every trail seen (by a
// checkpoint) is there, prints each one's status to w and returns the
// first break.
func verifyAudit(ctx context.Context, st store.Store, seen map[string]auditcheckpoint.Seen, retention time.Duration, w io.Writer) error {
	heads, err := st.AuditHeads(ctx)
	if err != nil {
		return err
	}
	var first *audit.Break
	report := func(s chainStatus, b *audit.Break) error {
		if b != nil {
			s.Status, s.Seq, s.Reason = "broken", b.Seq, b.Reason
			if first == nil {
				first = b
			}
		}
		return printLine(w, s)
	}
	missing := maps.Clone(seen)
	for _, h := range heads {
		delete(missing, h.Workspace)
		s := seen[h.Workspace]
		err := verifyChain(ctx, st, &h, store.AuditCheck{Seen: s.Link, SeenAt: s.At, Retention: retention})
		status := chainStatus{Workspace: h.Workspace, Last: h.Last.Seq, Status: "ok"}
		if h.Last.Seq > h.Pruned.Seq {
			status.First = h.Pruned.Seq + 1
		}
		var b *audit.Break
		if err != nil && !errors.As(err, &b) {
			return err
		}
		if err := report(status, b); err != nil {
			return err
		}
	}
	for _, ws := range slices.Sorted(maps.Keys(missing)) {
		if missing[ws].Seq == 0 {
			continue // seen empty: nothing was lost
		}
		b := &audit.Break{Workspace: ws, Seq: 1, Reason: fmt.Sprintf("the trail is missing: a checkpoint saw it reach record %d", missing[ws].Seq)}
		if err := report(chainStatus{Workspace: ws, Status: "ok"}, b); err != nil {
			return err
		}
	}
	if first != nil {
		return fmt.Errorf("the audit trail of %s breaks at record %d: %s", trailName(first.Workspace), first.Seq, first.Reason)
	}
	return nil
}

// verifyChain verifies the chain of *h against c. A break found while
// retention pruned the chain may only be the prune's doing: then it reads
// the head again (into *h) and verifies once more.
func verifyChain(ctx context.Context, st store.Store, h *audit.Head, c store.AuditCheck) error {
	err := store.VerifyAudit(ctx, st, *h, c)
	var b *audit.Break
	if !errors.As(err, &b) {
		return err
	}
	heads, herr := st.AuditHeads(ctx)
	if herr != nil {
		return err
	}
	for _, now := range heads {
		if now.Workspace == h.Workspace && now.Pruned != h.Pruned {
			*h = now
			return store.VerifyAudit(ctx, st, now, c)
		}
	}
	return err
}
