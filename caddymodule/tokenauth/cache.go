package tokenauth

import (
	"container/list"
	"crypto/ed25519"
	"crypto/sha256"
	"sync"
	"time"
)

// cache remembers verified access tokens by the SHA-256 of the token (the
// token itself is never kept). An entry lives until the token's exp or
// maxAge after its verification, whichever comes first. Entries are kept
// in verification order: since every entry's max age is the same, the
// oldest is also the first to reach it, so expired entries are dropped from
// the front as new ones arrive, and when the cache is full the oldest goes.
// Every operation is O(1), amortized for the dropping of expired entries.
//
// It is hand-written because its entries expire one by one (at their own
// exp), which the usual LRU packages, with one TTL for all, do not do.
type cache struct {
	size   int
	maxAge time.Duration

	mu      sync.Mutex
	entries map[[sha256.Size]byte]*list.Element // of *entry
	order   list.List                           // oldest first
}

// entry is a verified token: its claims, the key that verified them, and
// the end of the entry's life.
type entry struct {
	sum     [sha256.Size]byte
	claims  *Claims
	key     ed25519.PublicKey
	expires time.Time
}

func newCache(size int, maxAge time.Duration) *cache {
	return &cache{size: size, maxAge: maxAge, entries: make(map[[sha256.Size]byte]*list.Element)}
}

// get returns the entry for sum if it is still alive at now. The entry must
// not be modified.
func (c *cache) get(sum [sha256.Size]byte, now time.Time) (*entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[sum]
	if !ok {
		return nil, false
	}
	e := el.Value.(*entry)
	if !now.Before(e.expires) {
		c.drop(el)
		return nil, false
	}
	return e, true
}

// put remembers claims, verified at now with key, under sum.
func (c *cache) put(sum [sha256.Size]byte, claims *Claims, key ed25519.PublicKey, now time.Time) {
	expires := now.Add(c.maxAge)
	if claims.ExpiresAt.Before(expires) {
		expires = claims.ExpiresAt
	}
	if !now.Before(expires) {
		return // accepted within the leeway only: not worth remembering
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[sum]; ok {
		c.drop(el)
	}
	// Drop expired entries from the front, then the oldest if still full.
	for el := c.order.Front(); el != nil; el = c.order.Front() {
		if c.order.Len() < c.size && now.Before(el.Value.(*entry).expires) {
			break
		}
		c.drop(el)
	}
	c.entries[sum] = c.order.PushBack(&entry{sum: sum, claims: claims, key: key, expires: expires})
}

// remove forgets sum.
func (c *cache) remove(sum [sha256.Size]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[sum]; ok {
		c.drop(el)
	}
}

// drop removes el; c.mu must be held.
func (c *cache) drop(el *list.Element) {
	delete(c.entries, c.order.Remove(el).(*entry).sum)
}
