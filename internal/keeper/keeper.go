package keeper

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	"gocloud.dev/secrets"

	"github.com/health-data-connect/hdc/internal/redact"
)

// Schemes are the keeper URL schemes this package opens.
var Schemes = []string{"awskms", "gcpkms", "azurekeyvault", "hashivault", "base64key", "keyfile"}

// ErrUnwrap is every failure to unwrap a data key: the keeper refused it, it
// is not what the keeper wrapped (another keeper's, or altered), or it was
// wrapped for another data key id. One error for all, since the keeper's
// own says no more that helps.
var ErrUnwrap = errors.New("the keeper cannot unwrap the data key (is it the keeper the data was wrapped with?)")

// Keeper wraps and unwraps data keys with a key it never reveals.
type Keeper struct {
	k     *secrets.Keeper
	id    string
	calls atomic.Int64
}

// Open opens the keeper that rawURL names. Its errors never repeat the
// URL's key (base64key://), password or query; they name a KMS key by its
// URL's scheme, host and path.
func Open(ctx context.Context, rawURL string) (*Keeper, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return nil, errors.New("not a URL (awskms://, gcpkms://, azurekeyvault://, hashivault://, base64key://, keyfile:///path)")
	}
	scheme := strings.ToLower(u.Scheme)
	if !slices.Contains(Schemes, scheme) {
		return nil, fmt.Errorf("scheme %q is not a keeper's (%s)", scheme, strings.Join(Schemes, ", "))
	}
	k, err := secrets.OpenKeeper(ctx, rawURL)
	if err != nil {
		if scheme == "base64key" {
			return nil, errors.New("base64key: the host must be a 32-byte key in URL-safe base64, and nothing else")
		}
		// The drivers quote the URL whole (gocloud.dev's do).
		return nil, fmt.Errorf("%s: %w", scheme, redact.Error(err, rawURL))
	}
	return &Keeper{k: k, id: fingerprint(u)}, nil
}

// ID names the keeper's key without revealing it, for the records of what
// wraps a data key (a rewrap leaves a data key that the new keeper already
// wraps): the SHA-256 of the URL's scheme, host and path, which name the
// key (and hold it, for base64key://), not of its options. A KMS answers a
// decryption with the key the ciphertext names, whichever keeper asks, so
// which keeper wrapped a data key cannot be learnt by unwrapping it.
func (k *Keeper) ID() string { return k.id }

// fingerprint is the ID of the keeper at u.
func fingerprint(u *url.URL) string {
	sum := sha256.Sum256([]byte(strings.ToLower(u.Scheme) + "://" + u.Host + u.Path))
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// wrapPrefix starts what is wrapped: the data key's id then its bytes, so
// that a wrapped key stored under another id does not unwrap.
const wrapPrefix = "hdc-data-key-v1\x00"

// Wrap returns d wrapped by the keeper: one call to it.
func (k *Keeper) Wrap(ctx context.Context, d *DataKey) ([]byte, error) {
	k.calls.Add(1)
	out, err := k.k.Encrypt(ctx, slices.Concat([]byte(wrapPrefix+d.id+"\x00"), d.raw[:]))
	if err != nil {
		return nil, fmt.Errorf("the keeper did not wrap the data key: %w", err)
	}
	return out, nil
}

// Unwrap returns the data key id that wrapped holds: one call to the
// keeper. Any failure is ErrUnwrap, or the context's error.
func (k *Keeper) Unwrap(ctx context.Context, id string, wrapped []byte) (*DataKey, error) {
	k.calls.Add(1)
	plain, err := k.k.Decrypt(ctx, wrapped)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	rest, ok := bytes.CutPrefix(plain, []byte(wrapPrefix+id+"\x00"))
	if err != nil || !ok || len(rest) != KeySize {
		return nil, ErrUnwrap
	}
	return newDataKey(id, rest), nil
}

// Calls returns how many times the keeper was called.
func (k *Keeper) Calls() int64 { return k.calls.Load() }

// Close releases the keeper.
func (k *Keeper) Close() error { return k.k.Close() }
