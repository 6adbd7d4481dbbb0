package ratelimit

import (
	"math"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/health-data-connect/hdc/internal/contract"
)

// Policy is one limit as draft-ietf-httpapi-ratelimit-headers-11 names
// it: a name, a quota of Quota units a window of Window seconds, and the
// unit when it is not requests.
type Policy struct {
	Name   string
	Quota  int64
	Window int64
	// Unit is "" for requests, "content-bytes" for a quota of bytes.
	Unit string
}

// RatePolicy is the policy of a rate named name: its requests a window of
// a second (the window of one request below one a second).
func RatePolicy(name string, r contract.Rate) Policy {
	if r.PerSecond >= 1 {
		return Policy{Name: name, Quota: int64(math.Round(r.PerSecond)), Window: 1}
	}
	return Policy{Name: name, Quota: 1, Window: int64(math.Ceil(1 / r.PerSecond))}
}

// QuotaPolicy is the policy of a daily quota of bytes named name.
func QuotaPolicy(name string, bytes int64) Policy {
	return Policy{Name: name, Quota: bytes, Window: 86400, Unit: "content-bytes"}
}

// Status is a policy's state for the RateLimit field: Remaining units,
// and Reset seconds until the quota is whole again.
type Status struct {
	Name      string
	Remaining int64
	Reset     time.Duration
}

// PolicyField returns the RateLimit-Policy field of policies.
func PolicyField(policies ...Policy) (string, error) {
	l := make(httpsfv.List, 0, len(policies))
	for _, p := range policies {
		params := httpsfv.NewParams()
		params.Add("q", p.Quota)
		params.Add("w", p.Window)
		if p.Unit != "" {
			params.Add("qu", p.Unit)
		}
		l = append(l, httpsfv.Item{Value: p.Name, Params: params})
	}
	return httpsfv.Marshal(l)
}

// StatusField returns the RateLimit field of statuses.
func StatusField(statuses ...Status) (string, error) {
	l := make(httpsfv.List, 0, len(statuses))
	for _, s := range statuses {
		params := httpsfv.NewParams()
		params.Add("r", max(0, s.Remaining))
		params.Add("t", Seconds(s.Reset))
		l = append(l, httpsfv.Item{Value: s.Name, Params: params})
	}
	return httpsfv.Marshal(l)
}

// Seconds is d in whole seconds, rounded up: what Retry-After and the
// draft's t say.
func Seconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}
