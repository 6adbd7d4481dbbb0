// Package duration reads a duration as the programs' settings take one,
// hdc-backend's flags and variables and the hdc commands that mirror them
// (hdc audit verify --retention, as HDC_AUDIT_RETENTION): whole seconds
// ("1800"), or a Go duration ("30m").
package duration

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Parse reads s as whole seconds or as a Go duration (time.ParseDuration).
// Its error quotes s, which is a setting's value, never a secret.
func Parse(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > math.MaxInt64/int64(time.Second) || n < math.MinInt64/int64(time.Second) {
			return 0, fmt.Errorf("%q seconds is too long", s)
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither seconds nor a duration such as 30m", s)
	}
	return d, nil
}
