package audit

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"time"
)

// ErrNoKey is returned for the link of a keyed record by a chain without
// the key.
var ErrNoKey = errors.New("audit: the record is keyed; its link needs the chain's key (the keeper)")

// Chain links records: a record's successor holds its link, the SHA-256 of
// its canonical form for a record written before the chain had a key, the
// HMAC-SHA-256 of it under the chain's key for a keyed one. A writer of
// the database can recompute the first, never the second. The nil Chain
// is the unkeyed one.
type Chain struct {
	key []byte
}

// NewChain returns the chain keyed by key (from the keeper: the store's
// data key derives it).
func NewChain(key []byte) *Chain { return &Chain{key: append([]byte(nil), key...)} }

// Keyed reports whether c appends keyed records.
func (c *Chain) Keyed() bool { return c != nil && len(c.key) > 0 }

// Next returns e as the record that follows last in c, keyed when c is,
// or e's validation error. The record's time is e's truncated to the
// microsecond in UTC, its source e's with an IPv4-mapped IPv6 address
// unmapped.
func (c *Chain) Next(last Link, e Event) (Record, error) {
	e.At = e.At.UTC().Truncate(time.Microsecond)
	e.Source = e.Source.Unmap()
	if err := e.Validate(); err != nil {
		return Record{}, err
	}
	return Record{Event: e, Seq: last.Seq + 1, Prev: last.Hash, Keyed: c.Keyed()}, nil
}

// Hash returns r's link, which its successor holds as Prev.
func (c *Chain) Hash(r Record) (Hash, error) { return c.sum(r.Keyed, r.Canonical()) }

// Link returns r as its successor sees it.
func (c *Chain) Link(r Record) (Link, error) {
	h, err := c.Hash(r)
	return Link{Seq: r.Seq, Hash: h}, err
}

// Sum returns the link of the record whose canonical form is body.
func (c *Chain) Sum(body []byte) (Hash, error) {
	r, err := Parse(body)
	if err != nil {
		return Hash{}, err
	}
	return c.sum(r.Keyed, body)
}

func (c *Chain) sum(keyed bool, canonical []byte) (Hash, error) {
	if !keyed {
		return Sum(canonical), nil
	}
	if !c.Keyed() {
		return Hash{}, ErrNoKey
	}
	m := hmac.New(sha256.New, c.key)
	m.Write(canonical)
	var h Hash
	copy(h[:], m.Sum(nil))
	return h, nil
}
