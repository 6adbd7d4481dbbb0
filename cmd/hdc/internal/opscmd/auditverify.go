package opscmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit/retention"
	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/backend/storage"
	"github.com/health-data-connect/hdc/cmd/hdc/internal/cli"
	"github.com/health-data-connect/hdc/internal/duration"
)

func newAuditVerifyCmd(sf *storeFlags) *cobra.Command {
	var checkpoints, retain string
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

With --admin the backend verifies, against its own checkpoints and
retention: --checkpoints and --retention are not used.

Prints one JSON line per trail with its status. When a trail breaks, exits
1 naming the first break: its workspace, the record's seq, and what is
wrong there. When the checkpoints' bucket holds none yet (a new fleet,
before its first checkpoint), verifies the chains alone, says so, and exits
3 (the Admin API's problem no_checkpoint): nothing broke, but what only a
checkpoint shows was not checked.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			keep, err := duration.Parse(retain)
			if err != nil || keep < 0 {
				return fmt.Errorf("--retention (HDC_AUDIT_RETENTION): %q is neither seconds nor a duration such as 52560h", retain)
			}
			cfg := trail.Config{Checkpoints: cmp.Or(checkpoints, sf.LocalCheckpoints()), Retention: keep}
			return sf.withTrail(cmd, cfg, func(ctx context.Context, p adminapi.API) error {
				return verifyTrails(ctx, cmd, p, sf.Admin.remoteMode())
			})
		},
	}
	cli.EnvStringVar(cmd.Flags(), &checkpoints, "checkpoints", "HDC_AUDIT_CHECKPOINTS", "",
		"bucket `url` of the backend's audit checkpoints; log or empty: <data>/"+storage.CheckpointDir+" when it is there")
	cli.EnvStringVar(cmd.Flags(), &retain, "retention", "HDC_AUDIT_RETENTION", retention.Default.String(),
		"the backend's audit retention, a `duration`: no prune may remove a younger record")
	return cmd
}

// ExitNoCheckpoint is the status hdc audit verify exits with when every
// trail verifies but the checkpoints' bucket holds no checkpoint yet.
const ExitNoCheckpoint = 3

// verifyTrails verifies the trails through p, prints each one's line and
// fails naming the first break; with no checkpoint yet it fails with
// ExitNoCheckpoint.
func verifyTrails(ctx context.Context, cmd *cobra.Command, p adminapi.API, remote bool) error {
	r, err := p.VerifyAudit(ctx)
	none := adminapi.AsNoCheckpoint(err)
	if err != nil && none == nil {
		return err
	}
	if none == nil {
		noteCheckpoint(cmd.ErrOrStderr(), r.Checkpoint, remote)
	}
	for _, s := range r.Trails {
		if err := printLine(cmd.OutOrStdout(), s); err != nil {
			return err
		}
	}
	broken := r.Err()
	switch {
	case none == nil:
		return broken
	case broken != nil: // a break outranks the missing checkpoint
		fmt.Fprintln(cmd.ErrOrStderr(), "hdc:", none.Detail)
		return broken
	}
	return &cli.ExitError{Status: ExitNoCheckpoint, Err: errors.New(none.Detail)}
}

// noteCheckpoint says on w which checkpoint the trails were verified
// against, or that none was and what that cannot show.
func noteCheckpoint(w io.Writer, c *adminapi.Checkpoint, remote bool) {
	const unseen = "the last records of a trail deleted with its head, or a whole trail deleted, do not show"
	switch {
	case c != nil:
		fmt.Fprintf(w, "hdc: verifying against the checkpoint of %s in %s\n", c.At.Format(time.RFC3339), c.Where)
	case remote:
		fmt.Fprintln(w, "hdc: the backend verified without checkpoints (its HDC_AUDIT_CHECKPOINTS is log or unset): "+unseen)
	default:
		fmt.Fprintln(w, "hdc: verifying without checkpoints (--checkpoints, or <data>/"+storage.CheckpointDir+"): "+unseen)
	}
}
