package registryfile

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/keeper"
)

// keeperTimeout bounds one call to the keeper.
const keeperTimeout = 30 * time.Second

// ErrNoKeeper is returned when a file must be written, or a file of sealed
// secrets read, without a keeper.
var ErrNoKeeper = errors.New("the registry's secrets are sealed under a data key the keeper wraps: configure the keeper (HDC_KEEPER)")

// fileForm is the registry file as stored. A file written by this version
// has a data key and every secret sealed under it, bound to its kid and
// client; a file of an earlier version has plain secrets and no data key,
// and is still read.
type fileForm struct {
	DataKey *wrappedKey `json:"data_key,omitempty"`
	Keys    []storedKey `json:"keys"`
}

// wrappedKey is the file's data key, wrapped by the keeper whose ID
// (keeper.Keeper.ID) it names.
type wrappedKey struct {
	ID      string `json:"id"`
	Wrapped []byte `json:"wrapped"`
	Keeper  string `json:"keeper"`
}

// storedKey is a key as stored: its secret sealed, or plain in a file of an
// earlier version.
type storedKey struct {
	clientkey.Listed
	Secret       string `json:"secret,omitempty"`
	SealedSecret string `json:"sealed_secret,omitempty"`
}

// binding is what a key's sealed secret is bound to: a sealed secret copied
// to another kid or client does not open.
func binding(k *Entry) []string { return []string{"kid-registry", k.Kid, k.ClientID} }

// Sealer seals and opens the registry's secrets under a data key that a
// keeper wraps. It unwraps a file's data key once and remembers it, so that
// reloading a file calls the keeper only when its data key changed. It is
// safe for concurrent use.
type Sealer struct {
	keeper *keeper.Keeper
	mu     sync.Mutex
	ref    *wrappedKey
	key    *keeper.DataKey
}

// NewSealer returns a sealer over k.
func NewSealer(k *keeper.Keeper) *Sealer { return &Sealer{keeper: k} }

// open returns the data key ref wraps.
func (s *Sealer) open(ref *wrappedKey) (*keeper.DataKey, error) {
	if s == nil {
		return nil, ErrNoKeeper
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ref != nil && s.ref.ID == ref.ID && string(s.ref.Wrapped) == string(ref.Wrapped) {
		return s.key, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), keeperTimeout)
	defer cancel()
	key, err := s.keeper.Unwrap(ctx, ref.ID, ref.Wrapped)
	if err != nil {
		return nil, fmt.Errorf("the registry's data key: %w", err)
	}
	s.ref, s.key = ref, key
	return key, nil
}

// fresh returns a new data key, wrapped.
func (s *Sealer) fresh() (*wrappedKey, *keeper.DataKey, error) {
	key := keeper.NewDataKey()
	ctx, cancel := context.WithTimeout(context.Background(), keeperTimeout)
	defer cancel()
	wrapped, err := s.keeper.Wrap(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	return &wrappedKey{ID: key.ID(), Wrapped: wrapped, Keeper: s.keeper.ID()}, key, nil
}

// registry returns the validated registry of f, its secrets opened with
// s. A secret that does not open leaves its key unavailable (refused, like
// an unknown kid), and the others in use.
func (f *fileForm) registry(s *Sealer) (*Registry, error) {
	var key *keeper.DataKey
	if f.DataKey != nil {
		var err error
		if key, err = s.open(f.DataKey); err != nil {
			return nil, err
		}
	}
	r := &Registry{keys: make([]Entry, len(f.Keys)), dataKey: f.DataKey}
	for i, st := range f.Keys {
		k := Entry{Key: st.Listed.Key(st.Secret), sealed: st.SealedSecret}
		switch {
		case st.Secret != "" && st.SealedSecret != "":
			return nil, fmt.Errorf("key %d (%q): secret and sealed_secret are exclusive", i, k.Kid)
		case st.SealedSecret != "" && key == nil:
			return nil, fmt.Errorf("key %d (%q): a sealed secret, and the file has no data_key", i, k.Kid)
		case st.SealedSecret != "":
			secret, err := key.Open(st.SealedSecret, binding(&k)...)
			if err != nil {
				r.unavailable = append(r.unavailable, k.Kid)
			}
			k.Secret = string(secret)
		default:
			r.plain++
		}
		r.keys[i] = k
	}
	return r, r.index()
}

// encode returns keys as stored, their secrets sealed under key (ref
// wrapped); the sealed secret of a key whose secret did not open is kept
// as it was.
func encode(keys []Entry, ref *wrappedKey, key *keeper.DataKey) fileForm {
	f := fileForm{DataKey: ref, Keys: make([]storedKey, len(keys))}
	for i := range keys {
		k := &keys[i]
		sealed := k.sealed
		if k.Available() {
			sealed = key.Seal([]byte(k.Secret), binding(k)...)
		}
		f.Keys[i] = storedKey{Listed: k.Listed(), SealedSecret: sealed}
	}
	return f
}

// current returns the data key a file is sealed with: the file's own (ref),
// or a new one for a file that has none.
func (s *Sealer) current(ref *wrappedKey) (*wrappedKey, *keeper.DataKey, error) {
	if ref == nil {
		return s.fresh()
	}
	key, err := s.open(ref)
	return ref, key, err
}

// Rewrap wraps the data key of the registry file at path under to instead
// of from, keeping every sealed secret as it is, and returns the data
// key's id, reporting whether it changed the file. A file whose data key
// to already wraps is left as it is, so that an interrupted rewrap is run
// again safely; a file of plain secrets is sealed under a new data key to
// wraps.
func Rewrap(path string, from, to *keeper.Keeper) (id string, changed bool, err error) {
	err = locked(path, func(f *fileForm) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*keeperTimeout)
		defer cancel()
		if f.DataKey == nil {
			r, err := f.registry(nil)
			if err != nil {
				return err
			}
			ref, key, err := NewSealer(to).fresh()
			if err != nil {
				return err
			}
			id, changed = ref.ID, true
			return write(path, encode(r.keys, ref, key))
		}
		id = f.DataKey.ID
		if f.DataKey.Keeper == to.ID() {
			return nil
		}
		key, err := from.Unwrap(ctx, f.DataKey.ID, f.DataKey.Wrapped)
		if err != nil {
			return fmt.Errorf("the registry's data key, with the current keeper: %w", err)
		}
		wrapped, err := to.Wrap(ctx, key)
		if err != nil {
			return err
		}
		changed = true
		f.DataKey = &wrappedKey{ID: key.ID(), Wrapped: wrapped, Keeper: to.ID()}
		return write(path, *f)
	})
	return id, changed, err
}
