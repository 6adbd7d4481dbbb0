package planeclient

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
)

// clientLimitsPage is the key plane's answer to a page of every client's
// limits (contract.PathClientLimits).
type clientLimitsPage struct {
	Limits []contract.ClientLimits `json:"limits"`
	Next   string                  `json:"next"`
}

// limitsPageSize is how many clients' limits one request asks for.
const limitsPageSize = 1000

// ClientLimits returns the overrides of client's limits as the feed left
// them, and whether it has any.
func (s *Source) ClientLimits(client string) (contract.Limits, bool) {
	m := s.limits.Load()
	if m == nil {
		return contract.Limits{}, false
	}
	l, ok := (*m)[client]
	return l, ok
}

// loadLimits reads every client's overrides, page by page, and replaces
// those held. A backend that serves none (a version before them) leaves
// none.
func (s *Source) loadLimits(ctx context.Context) error {
	all := map[string]contract.Limits{}
	for after := ""; ; {
		var page clientLimitsPage
		q := url.Values{"after": {after}, "limit": {strconv.Itoa(limitsPageSize)}}
		err := s.client.get(ctx, contract.PathClientLimits+"?"+q.Encode(), maxAnswer, &page)
		if errors.Is(err, ErrUnknown) {
			break
		}
		if err != nil {
			return err
		}
		for _, c := range page.Limits {
			all[c.ClientID] = c.Limits
		}
		if page.Next == "" || page.Next == after {
			break
		}
		after = page.Next
	}
	s.limits.Store(&all)
	return nil
}

// limitsChanged reads again the overrides of every client a change of
// changes names (Client set, Kid empty), before the changes count as
// applied: a failure leaves them to be asked for again.
func (s *Source) limitsChanged(ctx context.Context, changes []clientkey.Change) error {
	updated := map[string]*contract.Limits{}
	for _, c := range changes {
		if c.Kid != "" || c.Client == "" {
			continue
		}
		if _, done := updated[c.Client]; done {
			continue
		}
		var cl contract.ClientLimits
		err := s.client.get(ctx, contract.PathClientLimits+"/"+url.PathEscape(c.Client), maxAnswer, &cl)
		switch {
		case errors.Is(err, ErrUnknown):
			updated[c.Client] = nil
		case err != nil:
			return err
		default:
			updated[c.Client] = &cl.Limits
		}
	}
	if len(updated) > 0 {
		s.setLimits(updated)
	}
	return nil
}

// setLimits copies the overrides held with updated applied (nil: none).
func (s *Source) setLimits(updated map[string]*contract.Limits) {
	s.limitsMu.Lock()
	defer s.limitsMu.Unlock()
	next := map[string]contract.Limits{}
	if m := s.limits.Load(); m != nil {
		for k, v := range *m {
			next[k] = v
		}
	}
	for client, l := range updated {
		if l == nil {
			delete(next, client)
		} else {
			next[client] = *l
		}
	}
	s.limits.Store(&next)
}
