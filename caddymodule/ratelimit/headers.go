package ratelimit

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/dunglas/httpsfv"
	lru "github.com/hashicorp/golang-lru/v2"

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

// PolicyField returns the RateLimit-Policy field of policies, serialized
// by httpsfv once for each list of policies and remembered (they are
// few: the classes' rates and the quotas operators set).
func PolicyField(policies ...Policy) (string, error) {
	var key policyKey
	if len(policies) <= len(key) {
		copy(key[:], policies)
		if v, ok := policyFields.Get(key); ok {
			return v, nil
		}
	}
	v, err := marshalPolicies(policies)
	if err == nil && len(policies) <= len(key) {
		policyFields.Add(key, v)
	}
	return v, err
}

// policyKey is up to two policies, the most an answer names (a rate and
// the quota), as a key of policyFields.
type policyKey [2]Policy

// policyFields are the RateLimit-Policy fields serialized lately.
var policyFields, _ = lru.New[policyKey, string](1024)

// marshalPolicies serializes policies with httpsfv.
func marshalPolicies(policies []Policy) (string, error) {
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

// StatusField returns the RateLimit field of statuses: a list of
// sf-strings with two integer parameters, written directly on every
// answer (httpsfv's maps cost a limited request more than its count). A
// name must be printable ASCII without '"' or '\\', as the classes' and
// quotas' names are.
func StatusField(statuses ...Status) (string, error) {
	b := make([]byte, 0, 48*len(statuses))
	for i, s := range statuses {
		if !plainString(s.Name) {
			return "", fmt.Errorf("ratelimit: the policy name %q needs escaping", s.Name)
		}
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, '"')
		b = append(b, s.Name...)
		b = append(b, `";r=`...)
		b = strconv.AppendInt(b, max(0, s.Remaining), 10)
		b = append(b, ";t="...)
		b = strconv.AppendInt(b, Seconds(s.Reset), 10)
	}
	return string(b), nil
}

// plainString reports whether s is an sf-string with nothing to escape.
func plainString(s string) bool {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// Seconds is d in whole seconds, rounded up: what Retry-After and the
// draft's t say.
func Seconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}
