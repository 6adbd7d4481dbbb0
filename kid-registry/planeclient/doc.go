// Package planeclient is the edge's side of the key plane: it looks the
// clients' keys up in the backend by kid, over the hop, and keeps them in a
// bounded cache that the backend's change feed keeps current.
//
// A kid is looked up on its first use; concurrent look-ups of one kid share
// one request; a kid the backend does not know is remembered as unknown
// for a while; and the look-ups of kids not in the cache are rate limited,
// so that a flood of random kids costs the backend a bounded load and the
// clients whose keys are cached nothing. The feed is a long poll of the
// changes after the last number applied: each reconnect catches up from
// that number, so no change is lost while the backend is unreachable, and
// meanwhile the cache keeps what it has.
package planeclient
