// Package ratelimit counts a client's requests against its limits: a rate
// per route class (GCRA: a rate a second on average, a burst at once) and
// a daily quota of upload bytes. Memory counts on one edge; Redis counts
// for a fleet, on a GCRA script of a maintained library; Fleet counts in
// Redis and, while Redis does not answer, in memory at this edge's share
// of each limit. It knows nothing of HTTP: the hdc app holds the
// counting (caddymodule/edge), and the hdc_ratelimit handler
// (caddymodule/hdcratelimit) asks it and answers.
package ratelimit
