package adminclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/internal/problem"
)

// SearchAudit is admin.Service.SearchAudit.
func (c *Client) SearchAudit(ctx context.Context, q trail.Query) (admin.Page[json.RawMessage], error) {
	return get[admin.Page[json.RawMessage]](ctx, c, "/audit-events", q.Values())
}

// ExportAudit is admin.Service.ExportAudit: the export streamed to w as
// the API writes it. An export the API broke off fails.
func (c *Client) ExportAudit(ctx context.Context, q trail.Query, w io.Writer) error {
	resp, err := c.send(ctx, http.MethodGet, "/audit-events/export", q.Values(), nil, "")
	if err != nil {
		return fmt.Errorf("the Admin API at %s: %w", c.base.Host, err)
	}
	if resp.StatusCode >= 400 {
		return read(resp, nil)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("the Admin API at %s: the export: %w", c.base.Host, err)
	}
	return nil
}

// VerifyAudit is admin.Service.VerifyAudit: the backend verifies against
// its own checkpoints and retention. With the problem no_checkpoint, the
// report holds the trails the backend verified without one.
func (c *Client) VerifyAudit(ctx context.Context) (trail.Report, error) {
	a, err := get[verifyAnswer](ctx, c, "/audit/verify", nil)
	return a.Report, err
}

// verifyAnswer is a verification's answer: a report, or the problem
// no_checkpoint, whose member "trails" it reads.
type verifyAnswer struct{ trail.Report }

func (*verifyAnswer) extends(code string) bool { return code == problem.CodeNoCheckpoint }
