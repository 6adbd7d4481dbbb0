package main

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

	"github.com/health-data-connect/hdc/backend"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/fhir"
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
func (f *storeFlags) openAudit(cmd *cobra.Command) (store.Store, error) {
	st, err := backend.OpenExistingStore(cmd.Context(), f.db, f.data)
	if errors.Is(err, backend.ErrNoDatabase) {
		return nil, fmt.Errorf("%w (--db, --data)", err)
	}
	return st, err
}

// listedAudit is a record as list prints it: its canonical form, what its
// successor's prev hashes, with the record's own hash added as the last
// member.
func listedAudit(r audit.Record) []byte {
	c := r.Canonical()
	out := append(c[:len(c)-1:len(c)-1], `,"hash":"`...)
	out = append(out, r.Hash().String()...)
	return append(out, "\"}\n"...)
}

func newAuditListCmd(sf *storeFlags) *cobra.Command {
	var q auditQuery
	cmd := &cobra.Command{
		Use:   "list [--workspace W] [--since T] [--until T] [--entity ID] [--agent CLIENT] [--limit N]",
		Short: "Print audit records as JSON lines, oldest first in each trail",
		Long: `Print the audit records the filters select, one JSON object per line: the
record's canonical form (v, workspace, seq, prev, at, action, outcome and the
optional client, grant, entity, source, kid, request, pruned) followed by its
hash, the SHA-256 of that canonical form, which the next record's prev holds.
Without --workspace every trail is listed, in workspace order; --workspace ""
is the installation's trail. A date for --until means up to the end of that
day (UTC).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return q.print(cmd, sf, func(r audit.Record) ([]byte, error) { return listedAudit(r), nil })
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
			return q.print(cmd, sf, func(r audit.Record) ([]byte, error) {
				b, err := fhir.AuditEvent(r)
				return append(b, '\n'), err
			})
		},
	}
	q.register(cmd)
	return cmd
}

// print writes line(r) for each record q selects, on the store sf opens.
func (q *auditQuery) print(cmd *cobra.Command, sf *storeFlags, line func(audit.Record) ([]byte, error)) error {
	st, err := sf.openAudit(cmd)
	if err != nil {
		return err
	}
	defer st.Close()
	w := bufio.NewWriter(cmd.OutOrStdout())
	err = q.each(cmd.Context(), st, func(r audit.Record) error {
		b, err := line(r)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	return errors.Join(err, w.Flush())
}

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
	return &cobra.Command{
		Use:   "verify",
		Short: "Verify every audit trail's hash chain; fail naming the first break",
		Long: `Verify every trail's hash chain (each workspace's and the installation's):
every record present, unaltered and in order from the last one retention
removed to the chain's head. Prints one JSON line per trail with its status.
When a trail breaks, exits non-zero naming the first break: its workspace,
the record's seq, and what is wrong there (a record altered shows at the one
that follows it, whose prev no longer matches).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := sf.openAudit(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			return verifyAudit(cmd.Context(), st, cmd.OutOrStdout())
		},
	}
}

// verifyAudit verifies every chain of st, prints each one's status to w
// and returns the first break.
func verifyAudit(ctx context.Context, st store.Store, w io.Writer) error {
	heads, err := st.AuditHeads(ctx)
	if err != nil {
		return err
	}
	var first *audit.Break
	for _, h := range heads {
		err := verifyChain(ctx, st, &h)
		s := chainStatus{Workspace: h.Workspace, Last: h.Last.Seq, Status: "ok"}
		if h.Last.Seq > h.Pruned.Seq {
			s.First = h.Pruned.Seq + 1
		}
		var b *audit.Break
		switch {
		case errors.As(err, &b):
			s.Status, s.Seq, s.Reason = "broken", b.Seq, b.Reason
			if first == nil {
				first = b
			}
		case err != nil:
			return err
		}
		if err := printLine(w, s); err != nil {
			return err
		}
	}
	if first != nil {
		return fmt.Errorf("the audit trail of %s breaks at record %d: %s", trailName(first.Workspace), first.Seq, first.Reason)
	}
	return nil
}

// verifyChain verifies the chain of *h. A break found while retention
// pruned the chain may only be the prune's doing: then it reads the head
// again (into *h) and verifies once more.
func verifyChain(ctx context.Context, st store.Store, h *audit.Head) error {
	err := store.VerifyAudit(ctx, st, *h)
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
			return store.VerifyAudit(ctx, st, now)
		}
	}
	return err
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
