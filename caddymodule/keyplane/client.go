package keyplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	kidregistry "github.com/health-data-connect/hdc/kid-registry"
)

// errUnknown: the backend has no key of the kid.
var errUnknown = errors.New("keyplane: no such key")

// maxAnswer bounds an answer read from the backend: a page of changes is
// about 200 KiB.
const maxAnswer = 4 << 20

// client asks the backend's internal listener.
type client struct {
	base string // the listener's URL, without a trailing slash
	http *http.Client
}

// key asks for the key kid, and returns it with the number of its last
// change: errUnknown when the backend has none.
func (c *client) key(ctx context.Context, kid string) (*kidregistry.Key, int64, error) {
	var k contract.ClientKey
	path := strings.Replace(contract.PathKey, "{kid}", url.PathEscape(kid), 1)
	if err := c.get(ctx, path, &k); err != nil {
		return nil, 0, err
	}
	if k.Kid != kid {
		return nil, 0, fmt.Errorf("keyplane: asked for %q, the backend answered %q", kid, k.Kid)
	}
	key, err := kidregistry.FromContract(k)
	return key, k.Seq, err
}

// changes asks for the changes after a number, the backend holding the
// request up to wait.
func (c *client) changes(ctx context.Context, after int64, wait time.Duration) (contract.KeyChanges, error) {
	var out contract.KeyChanges
	q := url.Values{"after": {strconv.FormatInt(after, 10)}, "wait": {wait.String()}}
	err := c.get(ctx, contract.PathKeyChanges+"?"+q.Encode(), &out)
	return out, err
}

func (c *client) get(ctx context.Context, path string, out any) error {
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
		return errUnknown
	default:
		return fmt.Errorf("keyplane: the backend answered %s", resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAnswer)).Decode(out); err != nil {
		return fmt.Errorf("keyplane: the backend's answer: %w", err)
	}
	return nil
}
