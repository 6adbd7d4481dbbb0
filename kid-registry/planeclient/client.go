package planeclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/hopclient"
	"github.com/health-data-connect/hdc/internal/kidfilter"
)

// maxAnswer bounds an answer read from the backend: a page of changes is
// about 200 KiB.
const maxAnswer = 4 << 20

// client asks the backend's internal listener.
type client struct {
	base string // the listener's URL, without a trailing slash
	http *http.Client
}

// key asks for the key kid, and returns it with the number of its last
// change: ErrUnknown when the backend has none.
func (c *client) key(ctx context.Context, kid string) (*clientkey.Key, int64, error) {
	var k contract.ClientKey
	path := strings.Replace(contract.PathKey, "{kid}", url.PathEscape(kid), 1)
	if err := c.get(ctx, path, maxAnswer, &k); err != nil {
		return nil, 0, err
	}
	if k.Kid != kid {
		return nil, 0, fmt.Errorf("planeclient: asked for %q, the backend answered %q", kid, k.Kid)
	}
	key, err := fromWire(k)
	return key, k.Seq, err
}

// fromWire returns the key the backend handed, validated: its envelopes
// must be of a content encryption the edge opens, and it must have its
// secret.
func fromWire(c contract.ClientKey) (*clientkey.Key, error) {
	k := c.Key()
	switch {
	case c.Enc == "":
		return nil, fmt.Errorf("key %q: no content encryption", c.Kid)
	case c.Secret == "":
		return nil, fmt.Errorf("key %q: no secret", c.Kid)
	}
	if err := k.Validate(); err != nil {
		return nil, fmt.Errorf("key %q: %w", c.Kid, err)
	}
	return &k, nil
}

// changes asks for the changes after a number, the backend holding the
// request up to wait.
func (c *client) changes(ctx context.Context, after int64, wait time.Duration) (contract.KeyChanges, error) {
	var out contract.KeyChanges
	q := url.Values{"after": {strconv.FormatInt(after, 10)}, "wait": {wait.String()}}
	err := c.get(ctx, contract.PathKeyChanges+"?"+q.Encode(), maxAnswer, &out)
	return out, err
}

// filter asks for the filter of every kid: ErrUnknown when the backend
// serves none (a version before it).
func (c *client) filter(ctx context.Context) (*kidfilter.Filter, int64, error) {
	var w contract.KeyFilter
	if err := c.get(ctx, contract.PathKeyFilter, contract.MaxKeyFilter, &w); err != nil {
		return nil, 0, err
	}
	f, err := kidfilter.FromWire(w)
	return f, w.Last, err
}

// report posts r, an edge's report, and expects 204 No Content. The
// report is repeatable (hopclient.Repeatable): a backend that takes it
// twice keeps the latest use of each kid, and the applied number, as
// once, so that the hop's client may send it on to the next backend after
// any failure.
func (c *client) report(ctx context.Context, r contract.EdgeReport) error {
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(hopclient.Repeatable(ctx), http.MethodPost, c.base+contract.PathEdgeReport, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("planeclient: the backend answered the report %s", resp.Status)
	}
	return nil
}

// get reads the JSON answer to a GET of path, of at most limit bytes.
func (c *client) get(ctx context.Context, path string, limit int64, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return ErrUnknown
	default:
		return fmt.Errorf("planeclient: the backend answered %s", resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, limit)).Decode(out); err != nil {
		return fmt.Errorf("planeclient: the backend's answer: %w", err)
	}
	return nil
}
