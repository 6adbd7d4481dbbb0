package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
)

// Hash is the SHA-256 of a record's canonical form.
type Hash [sha256.Size]byte

// Sum returns the hash of a canonical form.
func Sum(canonical []byte) Hash { return sha256.Sum256(canonical) }

// HashFrom returns b, which must be sha256.Size bytes, as a Hash.
func HashFrom(b []byte) (Hash, error) {
	var h Hash
	if len(b) != len(h) {
		return h, errors.New("audit: a hash is 32 bytes")
	}
	copy(h[:], b)
	return h, nil
}

// String returns h in lowercase hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// Link is a record as its successor sees it. The zero Link is what the
// first record of a chain follows.
type Link struct {
	Seq  int64
	Hash Hash
}

// Head is where a workspace's chain stands.
type Head struct {
	Workspace string
	// Last is the chain's last record; zero for an empty chain.
	Last Link
	// Pruned is the last record retention removed, which the chain's
	// first record follows; zero when retention removed none.
	Pruned Link
}

// Record is an event in its workspace's chain.
type Record struct {
	Event
	// Seq numbers the workspace's records from 1, without gaps.
	Seq int64
	// Prev is the link of record Seq−1 (its Chain.Hash), or zero for
	// record 1.
	Prev Hash
	// Keyed records are linked to their successor by a MAC under the
	// chain's key, which a writer of the database does not hold; the
	// others, written before the chain had a key, by their SHA-256.
	Keyed bool
}

// Next returns e as the record that follows last in an unkeyed chain
// (Chain.Next).
func Next(last Link, e Event) (Record, error) { return (*Chain)(nil).Next(last, e) }

// Validate reports whether r may be in a chain: a valid event at a
// positive seq.
func (r Record) Validate() error {
	if r.Seq < 1 {
		return errors.New("audit: a record's seq starts at 1")
	}
	return r.Event.Validate()
}

// Hash returns the SHA-256 of r's canonical form, which its successor
// holds when r is not keyed (Chain.Hash links any record).
func (r Record) Hash() Hash { return Sum(r.Canonical()) }

// Link returns r, which is not keyed, as its successor sees it.
func (r Record) Link() Link { return Link{Seq: r.Seq, Hash: r.Hash()} }
