package hopclient

import "context"

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
