package contract

import (
	"errors"
	"fmt"
	"math"
)

// The bounds of a client's limits.
const (
	MaxPerSecond         = 1_000_000
	MaxBurst             = 1_000_000
	MaxUploadBytesPerDay = 1 << 50 // a PiB
)

// RouteClasses are the route classes a client's limits count apart, in
// the order the documents list them.
var RouteClasses = []RouteClass{ClassLogin, ClassReads, ClassWrites, ClassUploads}

// Check reports what makes l no client's limits: a class not of
// RouteClasses, a rate that is not either unlimited (a per_second and a
// burst of 0) or a per_second above 0 with a burst of at least 1, a
// negative upload quota, or a number past its bound.
func (l Limits) Check() error {
	for class, r := range l.Rates {
		if !knownClass(class) {
			return fmt.Errorf("unknown route class %q: the classes are login, reads, writes and uploads", class)
		}
		if err := r.check(); err != nil {
			return fmt.Errorf("%s: %w", class, err)
		}
	}
	if l.UploadBytesPerDay < 0 || l.UploadBytesPerDay > MaxUploadBytesPerDay {
		return fmt.Errorf("upload_bytes_per_day must be from 0 (the default's) to %d", int64(MaxUploadBytesPerDay))
	}
	return nil
}

// check reports what makes r no rate.
func (r Rate) check() error {
	switch {
	case r.PerSecond == 0 && r.Burst == 0:
		return nil // unlimited
	case math.IsNaN(r.PerSecond) || r.PerSecond <= 0 || r.PerSecond > MaxPerSecond:
		return fmt.Errorf("per_second must be above 0 and at most %d (or 0 with a burst of 0: no limit)", MaxPerSecond)
	case r.Burst < 1 || r.Burst > MaxBurst:
		return errors.New("burst must be from 1 to 1000000")
	}
	return nil
}

// knownClass reports whether c is one of RouteClasses.
func knownClass(c RouteClass) bool {
	for _, k := range RouteClasses {
		if c == k {
			return true
		}
	}
	return false
}
