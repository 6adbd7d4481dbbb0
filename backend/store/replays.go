package store

import (
	"context"
	"time"
)

// Replays remembers the jti of each fresh encrypted request under its kid
// until the request would be refused as stale anyway, for every process on
// the database: a replay through any edge and backend is refused.
type Replays interface {
	// NoteRequest records jti under kid until expires. It returns
	// ErrConflict, recording nothing, when the pair is recorded and has
	// not expired at now; one of concurrent notes of a pair, in any number
	// of processes, succeeds.
	NoteRequest(ctx context.Context, kid, jti string, expires, now time.Time) error
	// PruneRequests forgets the pairs expired at now and returns how many.
	PruneRequests(ctx context.Context, now time.Time) (int64, error)
}
