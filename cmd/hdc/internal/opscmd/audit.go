package opscmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/backend/sealed"
	"github.com/health-data-connect/hdc/backend/storage"
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
addresses, never content, secrets, tokens or keys.

With --admin the commands ask the Admin API (an operator's or an auditor's
certificate), which records each search, export and verification in the
trail, naming the person; without, they open the database, which must be
there, and record nothing.`,
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
	action              string
	limit               int
	workspaceWasChanged func() bool
}

func (q *auditQuery) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&q.workspace, "workspace", "", `workspace whose trail to read; "" is the installation's (default: every trail)`)
	cmd.Flags().StringVar(&q.since, "since", "", "records at or after this time: a date (2006-01-02, UTC) or RFC 3339")
	cmd.Flags().StringVar(&q.until, "until", "", "records before this time (RFC 3339), or up to the end of this date (2006-01-02, UTC)")
	cmd.Flags().StringVar(&q.entity, "entity", "", "records concerning this entity id (care context, subscription, client, grant, kid, workspace or certificate serial)")
	cmd.Flags().StringVar(&q.agent, "agent", "", "records of this acting client id, or of this person (alice@example.org)")
	cmd.Flags().StringVar(&q.action, "action", "", "records of this action (login, client_create, key_rotate, audit_search, ...)")
	cmd.Flags().IntVar(&q.limit, "limit", 0, "at most this many records in all (0: no limit)")
	q.workspaceWasChanged = func() bool { return cmd.Flags().Changed("workspace") }
}

// query returns the API's query of the flags, its Limit left 0. The
// times are checked here, to name their flag, and sent as given.
func (q *auditQuery) query() (adminapi.AuditQuery, error) {
	if q.limit < 0 {
		return adminapi.AuditQuery{}, errors.New("--limit must not be negative")
	}
	if _, err := trail.ParseTime(q.since, false); err != nil {
		return adminapi.AuditQuery{}, fmt.Errorf("--since %q: %w", q.since, err)
	}
	if _, err := trail.ParseTime(q.until, true); err != nil {
		return adminapi.AuditQuery{}, fmt.Errorf("--until %q: %w", q.until, err)
	}
	return adminapi.AuditQuery{Workspace: q.workspace, Scoped: q.workspaceWasChanged(), Agent: q.agent, Entity: q.entity,
		Action: q.action, Since: q.since, Until: q.until}, nil
}

// withTrail is withAPI for the audit commands, choosing the API alike:
// in direct mode the database must be there (they only read), and verify
// holds the trails to cfg.
func (f *storeFlags) withTrail(cmd *cobra.Command, cfg trail.Config, fn func(context.Context, adminapi.API) error) error {
	if err := f.chooseAdmin(); err != nil {
		return err
	}
	if f.Admin.remoteMode() {
		return f.withAPI(cmd, fn)
	}
	st, err := f.openAudit(cmd)
	if err != nil {
		return err
	}
	defer st.Close()
	cfg.CheckpointKey = st.CheckpointKey()
	return fn(direct(cmd.Context(), st, admin.WithTrail(trail.New(st, cfg))))
}

// openAudit opens the database the flags locate, which must exist: the
// audit commands only read.
func (f *storeFlags) openAudit(cmd *cobra.Command) (*sealed.Store, error) {
	st, err := f.OpenExisting(cmd.Context())
	if errors.Is(err, storage.ErrNoDatabase) {
		return nil, fmt.Errorf("%w (--db, --data)", err)
	}
	return st, err
}

func newAuditListCmd(sf *storeFlags) *cobra.Command {
	var q auditQuery
	cmd := &cobra.Command{
		Use:   "list [--workspace W] [--since T] [--until T] [--entity ID] [--agent WHO] [--action A] [--limit N]",
		Short: "Print audit records as JSON lines, oldest first in each trail",
		Long: `Print the audit records the filters select, one JSON object per line: the
record's canonical form (v, workspace, seq, prev, at, action, outcome and the
optional client, grant, entity, source, kid, request, pruned, count, a
rotation's replaced and weakened, the person who made an operator's
change or read the trail, and the fields an operator's change moved, before
and after) followed by its hash, the link the next record's prev holds: the
HMAC-SHA-256 of that canonical form under the chain's key (v 2), or its
SHA-256 for a record written before the chain had a key (v 1). Where the
record's client or entity is a client with a name, a last member "names"
gives it by id ({"<client id>": "Clinic Seven"}): it is not part of the record.
Without --workspace every trail is listed, in workspace order; --workspace ""
is the installation's trail. A date for --until means up to the end of that
day (UTC). --entity finds a rotation by the key it made and by each key it
replaced; --agent finds a client's actions by its id and a person's changes
and reads by their name.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tq, err := q.query()
			if err != nil {
				return err
			}
			return sf.withTrail(cmd, trail.Config{}, func(ctx context.Context, p adminapi.API) error {
				w := bufio.NewWriter(cmd.OutOrStdout())
				return errors.Join(listAudit(ctx, p, tq, q.limit, w), w.Flush())
			})
		},
	}
	q.register(cmd)
	return cmd
}

// listAudit writes the listing of each record q selects to w, a line
// each, a page at a time, at most limit in all when positive.
func listAudit(ctx context.Context, p adminapi.API, q adminapi.AuditQuery, limit int, w io.Writer) error {
	names := newClientNames(p)
	left := limit
	for {
		q.Limit = adminapi.MaxLimit
		if limit > 0 {
			q.Limit = min(q.Limit, left)
		}
		page, err := p.SearchAudit(ctx, q)
		if err != nil {
			return err
		}
		for _, item := range page.Items {
			line, err := names.line(ctx, item)
			if err != nil {
				return err
			}
			if _, err := w.Write(append(line, '\n')); err != nil {
				return err
			}
		}
		left -= len(page.Items)
		if page.Next == "" || limit > 0 && left <= 0 {
			return nil
		}
		q.Cursor = page.Next
	}
}

func newAuditExportCmd(sf *storeFlags) *cobra.Command {
	var q auditQuery
	cmd := &cobra.Command{
		Use:   "export [--workspace W] [--since T] [--until T] [--entity ID] [--agent WHO] [--action A] [--limit N]",
		Short: "Export audit records as FHIR R4 AuditEvent resources (NDJSON)",
		Long: `Export the audit records the filters select (as for list) as FHIR R4
AuditEvent resources, one per line: the NDJSON of FHIR bulk data export
(application/fhir+ndjson), mapped as the AuditEvent route maps them. --limit
is at most 1000, as the Admin API's; without it every record is exported.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tq, err := q.query()
			if err != nil {
				return err
			}
			if q.limit > adminapi.MaxLimit {
				return fmt.Errorf("--limit must be at most %d (0: every record)", adminapi.MaxLimit)
			}
			tq.Limit = q.limit
			return sf.withTrail(cmd, trail.Config{}, func(ctx context.Context, p adminapi.API) error {
				return p.ExportAudit(ctx, tq, cmd.OutOrStdout())
			})
		},
	}
	q.register(cmd)
	return cmd
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
