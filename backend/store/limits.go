package store

import (
	"context"
	"encoding/json"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/contract"
)

// ClientLimits are the operators' overrides of clients' limits (rate
// limits per route class, a daily upload quota), which reach the edges as
// key changes do: each change takes the key plane's next number, and
// ClientKeyChanges names the client (clientkey.Change.Client).
type ClientLimits interface {
	// SetClientLimits makes l the client's overrides (empty l: none, the
	// edges' defaults apply) and appends e, with the limits before and
	// after as its changes (LimitsChanges), in one transaction;
	// ErrNotFound when there is no such client.
	SetClientLimits(ctx context.Context, clientID string, l contract.Limits, e audit.Event) error
	// ClientLimits returns the client's overrides, and whether it has
	// any.
	ClientLimits(ctx context.Context, clientID string) (contract.Limits, bool, error)
	// ListClientLimits returns up to limit clients' overrides, of the
	// clients with any whose ids come after after, in the order of their
	// ids.
	ListClientLimits(ctx context.Context, after string, limit int) ([]contract.ClientLimits, error)
}

// LimitsJSON is l as the engines store it; "{}" for none.
func LimitsJSON(l contract.Limits) string {
	b, _ := json.Marshal(l) // a struct of numbers and a map of them: never fails
	return string(b)
}

// ParseLimitsJSON reads what LimitsJSON stored, and whether it holds any
// override.
func ParseLimitsJSON(s string) (contract.Limits, bool, error) {
	var l contract.Limits
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		return l, false, err
	}
	return l, len(l.Rates) > 0 || l.UploadBytesPerDay > 0, nil
}

// LimitsChanges returns the change of a client's limits from before to
// after, as an audit record holds it (the limits' JSON, "" for none); nil
// when they are the same.
func LimitsChanges(before, after contract.Limits) []audit.Change {
	text := func(l contract.Limits) string {
		if s := LimitsJSON(l); s != "{}" {
			return s
		}
		return ""
	}
	c := audit.Change{Field: audit.ChangeLimits, Before: text(before), After: text(after)}
	if c.Before == c.After {
		return nil
	}
	return []audit.Change{c}
}
