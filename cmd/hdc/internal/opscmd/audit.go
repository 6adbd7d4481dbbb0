package opscmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/audit"
	fhir "github.com/health-data-connect/hdc/backend/audit/fhirview"
	"github.com/health-data-connect/hdc/backend/operator"
	"github.com/health-data-connect/hdc/backend/sealed"
	"github.com/health-data-connect/hdc/backend/store"
)

func newAuditCmd() *cobra.Command {
	var sf storeFlags
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Read, export and verify the audit trail in the backend's database",
		Long: `Read, export and verify the audit trail that the backend and the operator
commands write to the backend's database: one hash-chained trail per
workspace, and the installation's own trail (workspace "") for failed logins
of unknown clients and for retention. Records hold ids, codes, times and
addresses, never content, secrets, tokens or keys.`,
	}
	sf.register(cmd)
	cmd.AddCommand(newAuditListCmd(&sf), newAuditExportCmd(&sf), newAuditVerifyCmd(&sf))
	return cmd
}

// auditQuery is the filters of list and export.
type auditQuery struct {
	workspace           string
	since, until        string
	entity, agent       string
	limit               int
	workspaceWasChanged func() bool
}

func (q *auditQuery) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&q.workspace, "workspace", "", `workspace whose trail to read; "" is the installation's (default: every trail)`)
	cmd.Flags().StringVar(&q.since, "since", "", "records at or after this time: a date (2006-01-02, UTC) or RFC 3339")
	cmd.Flags().StringVar(&q.until, "until", "", "records before this time (RFC 3339), or up to the end of this date (2006-01-02, UTC)")
	cmd.Flags().StringVar(&q.entity, "entity", "", "records concerning this entity id (care context, subscription, client, grant or kid)")
	cmd.Flags().StringVar(&q.agent, "agent", "", "records of this acting client id")
	cmd.Flags().IntVar(&q.limit, "limit", 0, "at most this many records in all (0: no limit)")
	q.workspaceWasChanged = func() bool { return cmd.Flags().Changed("workspace") }
}

// parseAuditTime reads a flag's time: RFC 3339, or a date in UTC, which
// for --until (end) means up to the end of that day.
func parseAuditTime(flag, s string, end bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--%s %q: want a date (2006-01-02) or an RFC 3339 time", flag, s)
	}
	if end {
		d = d.AddDate(0, 0, 1)
	}
	return d, nil
}

// each calls fn with every record q selects, chain by chain in workspace
// order, a page at a time.
func (q *auditQuery) each(ctx context.Context, st store.Store, fn func(audit.Record) error) error {
	if q.limit < 0 {
		return errors.New("--limit must not be negative")
	}
	since, err := parseAuditTime("since", q.since, false)
	if err != nil {
		return err
	}
	until, err := parseAuditTime("until", q.until, true)
	if err != nil {
		return err
	}
	workspaces := []string{q.workspace}
	if !q.workspaceWasChanged() {
		heads, err := st.AuditHeads(ctx)
		if err != nil {
			return err
		}
		workspaces = workspaces[:0]
		for _, h := range heads {
			workspaces = append(workspaces, h.Workspace)
		}
	}
	left := q.limit
	for _, ws := range workspaces {
		f := store.AuditFilter{Workspace: ws, Since: since, Until: until, Entity: q.entity, Agent: q.agent}
		if err := q.eachOf(ctx, st, f, &left, fn); err != nil {
			return err
		}
	}
	return nil
}

// eachOf calls fn with every record of the trail f selects, a page at a
// time; with a --limit, with at most *left records, which it counts down.
func (q *auditQuery) eachOf(ctx context.Context, st store.Store, f store.AuditFilter, left *int, fn func(audit.Record) error) error {
	for {
		f.Limit = 1000
		if q.limit > 0 {
			if *left == 0 {
				return nil
			}
			f.Limit = min(f.Limit, *left)
		}
		rs, err := st.ListAudit(ctx, f)
		for _, r := range rs {
			if err := fn(r); err != nil {
				return err
			}
		}
		*left -= len(rs)
		if err != nil || len(rs) < f.Limit {
			return err
		}
		f.After = rs[len(rs)-1].Seq
	}
}

// openAudit opens the database the flags locate, which must exist: the
// audit commands only read.
func (f *storeFlags) openAudit(cmd *cobra.Command) (*sealed.Store, error) {
	st, err := f.OpenExisting(cmd.Context())
	if errors.Is(err, operator.ErrNoDatabase) {
		return nil, fmt.Errorf("%w (--db, --data)", err)
	}
	return st, err
}

// listedAudit is a record as list prints it: its canonical form, what its
// successor's prev links, with the record's own link added as the last
// member.
func listedAudit(c *audit.Chain, r audit.Record) ([]byte, error) {
	h, err := c.Hash(r)
	if err != nil {
		return nil, err
	}
	canonical := r.Canonical()
	out := append(canonical[:len(canonical)-1:len(canonical)-1], `,"hash":"`...)
	out = append(out, h.String()...)
	return append(out, "\"}\n"...), nil
}

func newAuditListCmd(sf *storeFlags) *cobra.Command {
	var q auditQuery
	cmd := &cobra.Command{
		Use:   "list [--workspace W] [--since T] [--until T] [--entity ID] [--agent CLIENT] [--limit N]",
		Short: "Print audit records as JSON lines, oldest first in each trail",
		Long: `Print the audit records the filters select, one JSON object per line: the
record's canonical form (v, workspace, seq, prev, at, action, outcome and the
optional client, grant, entity, source, kid, request, pruned, count, and a
rotation's replaced and weakened) followed by its
hash, the link the next record's prev holds: the HMAC-SHA-256 of that
canonical form under the chain's key (v 2), or its SHA-256 for a record
written before the chain had a key (v 1).
Without --workspace every trail is listed, in workspace order; --workspace ""
is the installation's trail. A date for --until means up to the end of that
day (UTC). --entity finds a rotation by the key it made and by each key it
replaced.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return q.print(cmd, sf, func(c *audit.Chain, r audit.Record) ([]byte, error) { return listedAudit(c, r) })
		},
	}
	q.register(cmd)
	return cmd
}

func newAuditExportCmd(sf *storeFlags) *cobra.Command {
	var q auditQuery
	cmd := &cobra.Command{
		Use:   "export [--workspace W] [--since T] [--until T] [--entity ID] [--agent CLIENT] [--limit N]",
		Short: "Export audit records as FHIR R4 AuditEvent resources (NDJSON)",
		Long: `Export the audit records the filters select (as for list) as FHIR R4
AuditEvent resources, one per line: the NDJSON of FHIR bulk data export
(application/fhir+ndjson), mapped as the AuditEvent route maps them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return q.print(cmd, sf, func(_ *audit.Chain, r audit.Record) ([]byte, error) {
				b, err := fhir.AuditEvent(r)
				return append(b, '\n'), err
			})
		},
	}
	q.register(cmd)
	return cmd
}

// print writes line(r) for each record q selects, on the store sf opens.
func (q *auditQuery) print(cmd *cobra.Command, sf *storeFlags, line func(*audit.Chain, audit.Record) ([]byte, error)) error {
	st, err := sf.openAudit(cmd)
	if err != nil {
		return err
	}
	defer st.Close()
	w := bufio.NewWriter(cmd.OutOrStdout())
	err = q.each(cmd.Context(), st, func(r audit.Record) error {
		b, err := line(st.AuditChain(), r)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	return errors.Join(err, w.Flush())
}

// trailName names a workspace's trail for an operator.
func trailName(ws string) string {
	if ws == "" {
		return "the installation (workspace \"\")"
	}
	return "workspace " + strconv.Quote(ws)
}

// printLine writes v as one line of JSON.
func printLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
