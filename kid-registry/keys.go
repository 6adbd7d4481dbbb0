// Package kidregistry is the edge's keys in one place: where they come
// from (a registry file, package registryfile, or the backend's key plane,
// package planeclient) behind one interface, the rules of which key a
// request may use, the ciphers of the keys in use, and when each kid was
// last used. The edge asks it for a key by kid and knows nothing of where
// keys come from.
package kidregistry

import (
	"context"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/kid-registry/planeclient"
)

// The errors of a look-up, whatever the source.
var (
	// ErrUnknown: no key has the kid.
	ErrUnknown = planeclient.ErrUnknown
	// ErrBusy: the kid could not be asked for now (the look-up rations
	// of the key plane are spent); it may be tomorrow.
	ErrBusy = planeclient.ErrBusy
)

// ciphersKept bounds the ciphers kept, one per key in use.
const ciphersKept = 100_000

// Keys is a source of keys being followed, with the ciphers of the keys in
// use and the last use of each kid. It is safe for concurrent use.
type Keys struct {
	source  source
	uses    lastUses
	ciphers *lru.Cache[string, *cachedKey]
	// dummies stand in, by enc, for unknown, retired and foreign keys and
	// for a key of another enc than the envelope's: checking a tag against
	// one costs what checking against a real key costs, and fails.
	dummies map[string]*jwe.CEK
}

// cachedKey is a key's cipher, kept while its secret stays the same.
type cachedKey struct {
	secret string
	key    *jwe.CEK
}

// source is where the keys come from: a registry file (fileSource) or the
// backend's key plane (planeSource).
type source interface {
	// lookup returns the key kid, whatever its status; it may ask, on
	// behalf of the request from the address from. Its errors are
	// ErrUnknown and ErrBusy.
	lookup(ctx context.Context, kid, from string) (*clientkey.Key, error)
	// known reports whether kid is a key the edge holds, without asking.
	known(kid string) bool
	// refused counts a request from the address from refused on a key the
	// edge held; its error is ErrBusy, once that address has spent its
	// look-up ration.
	refused(from string) error
	// keys returns the keys the edge holds.
	keys() []clientkey.Key
	// reload re-reads the file, or empties the cache of the backend's
	// keys; it returns whether the keys changed and how many it holds.
	reload() (changed bool, n int, err error)
	// run follows the source until ctx is done, reporting used to it
	// if it takes reports (the key plane does, a file does not).
	run(ctx context.Context, used planeclient.Uses)
	// close releases what the source holds.
	close() error
	// clientLimits returns the overrides of a client's limits the source
	// holds (the key plane's; a file holds none).
	clientLimits(client string) (contract.Limits, bool)
}

// newKeys returns the keys of src.
func newKeys(src source) *Keys {
	ciphers, _ := lru.New[string, *cachedKey](ciphersKept) // errs only on a size below 1
	return &Keys{source: src, ciphers: ciphers, dummies: map[string]*jwe.CEK{
		jwe.EncA128CBCHS256: jwe.DummyKey(jwe.EncA128CBCHS256), jwe.EncA256GCM: jwe.DummyKey(jwe.EncA256GCM)}}
}

// Usable returns the key kid when a request may use it: active or
// retiring, and client's unless anyClient (a login, or a request whose
// body names its client). It may look the kid up on behalf of the request
// from the address from. Its errors are ErrUnknown and ErrBusy.
func (k *Keys) Usable(ctx context.Context, kid, from, client string, anyClient bool) (*clientkey.Key, error) {
	key, err := k.source.lookup(ctx, kid, from)
	switch {
	case err != nil:
		return nil, err
	case !key.Usable() || (!anyClient && key.ClientID != client):
		return nil, ErrUnknown
	}
	return key, nil
}

// Cipher returns the cipher of key, built once per secret.
func (k *Keys) Cipher(key *clientkey.Key) (*jwe.CEK, error) {
	if c, ok := k.ciphers.Get(key.Kid); ok && c.secret == key.Secret && c.key.Enc() == key.ContentEncryption() {
		return c.key, nil
	}
	cipher, err := jwe.NewKeyFor(key.ContentEncryption(), key.Secret)
	if err != nil {
		return nil, err
	}
	k.ciphers.Add(key.Kid, &cachedKey{secret: key.Secret, key: cipher})
	return cipher, nil
}

// ForEnvelope returns the key kid and its cipher when a request may use it
// (Usable) and its enc is enc, and otherwise a nil key with the dummy
// cipher of enc, so that a refusal costs what an opening costs.
func (k *Keys) ForEnvelope(ctx context.Context, kid, from, client string, anyClient bool, enc string) (*clientkey.Key, *jwe.CEK, error) {
	key, err := k.Usable(ctx, kid, from, client, anyClient)
	if err == nil && key.ContentEncryption() == enc {
		if cipher, err := k.Cipher(key); err == nil {
			return key, cipher, nil
		}
	}
	return nil, k.dummies[enc], err
}

// Refused counts a request refused on its key (unknown, not the
// request's to use, of another enc, or a tag that did not verify) against
// the look-up ration of its source, the address from, unless the look-up
// counted it already: a key the edge did not hold before the request
// (held, Known before the look-up, false) cost one to look up. It returns
// ErrBusy once that source's ration is spent: the source then gets that
// one answer whether the kid exists or not.
func (k *Keys) Refused(from string, held bool) error {
	if !held {
		return nil
	}
	return k.source.refused(from)
}

// Touch records that kid was used now, and returns now. It is on the path
// of every encrypted request: a map read and an atomic store, no lock.
func (k *Keys) Touch(kid string) time.Time {
	now := time.Now()
	k.uses.of(kid).at.Store(now.UnixNano())
	return now
}

// LastUse returns when kid was last used at this edge, or the zero time.
func (k *Keys) LastUse(kid string) time.Time {
	v, ok := k.uses.m.Load(kid)
	if !ok {
		return time.Time{}
	}
	return time.Unix(0, v.(*lastUse).at.Load())
}

// Known reports whether kid is a key the edge holds, without asking: only
// such kids may become metric labels and log fields.
func (k *Keys) Known(kid string) bool { return k.source.known(kid) }

// List returns the keys the edge holds.
func (k *Keys) List() []clientkey.Key { return k.source.keys() }

// Reload re-reads the registry file, or empties the cache of the
// backend's keys; it returns whether the keys changed and how many the
// edge holds.
func (k *Keys) Reload() (changed bool, n int, err error) { return k.source.reload() }

// Run follows the source until ctx is done; the backend's key plane is
// told of the kids used (planeclient.Source.Report).
func (k *Keys) Run(ctx context.Context) { k.source.run(ctx, &k.uses) }

// ClientLimits returns the overrides of client's limits, and whether it
// has any: the key plane's, followed by its feed; none from a file.
func (k *Keys) ClientLimits(client string) (contract.Limits, bool) {
	return k.source.clientLimits(client)
}

// Close releases what the source holds.
func (k *Keys) Close() error { return k.source.close() }
