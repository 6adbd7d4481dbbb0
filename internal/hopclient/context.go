package hopclient

import (
	"context"
	"time"
)

type repeatableKey struct{}

// Repeatable returns ctx marking the requests made with it as ones a
// backend may receive twice to no harm (the edge's reports, of which the
// backends keep the latest of each use): such a request moves on to the
// next backend after any failure, as a GET does.
func Repeatable(ctx context.Context) context.Context {
	return context.WithValue(ctx, repeatableKey{}, true)
}

// repeatable reports whether ctx marks its requests repeatable.
func repeatable(ctx context.Context) bool {
	v, _ := ctx.Value(repeatableKey{}).(bool)
	return v
}

type attemptKey struct{}

// WithAttempt returns ctx under which each attempt of a request is bound
// by d in place of the Transport's Config.Attempt: for a request whose
// answer is slow to begin on purpose (a verification that reads every
// audit trail before it answers).
func WithAttempt(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, attemptKey{}, d)
}

// attemptOf is the bound of each attempt of a request made with ctx.
func (t *Transport) attemptOf(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(attemptKey{}).(time.Duration); ok {
		return d
	}
	return t.cfg.Attempt
}
