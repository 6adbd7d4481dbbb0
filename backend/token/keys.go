// Package token issues the backend's access tokens: EdDSA (Ed25519) JWTs
// whose signing keys live in the store, rotate on a schedule and are
// published as a JWKS for the edge to verify against.
//
// A new key is published before it signs: the edge caches the JWKS and
// refetches it on an unknown kid only once per cooldown, so a token signed
// with a key it has not fetched yet would be refused. Each key is created
// PublishAhead before it becomes the signing key, and is replaced RotateEvery
// after its creation.
//
// Rotation is safe with several replicas: a new key takes the next
// generation number, which the store keeps unique, so replicas that decide
// to rotate at the same moment add one key between them. A replaced key
// stays published until every token it may have signed can no longer be
// presented, even expired on the refresh route, then it is deleted.
package token

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/store"
)

// Config configures an Issuer.
type Config struct {
	// Issuer and Audience are the iss and aud claims.
	Issuer   string
	Audience string
	// AccessTTL is the lifetime of an access token.
	AccessTTL time.Duration
	// RotateEvery is the age at which the signing key is replaced; its
	// successor is created PublishAhead earlier.
	RotateEvery time.Duration
	// PublishAhead is how long a new key is published before it signs. It
	// must exceed the time an edge may go without refetching the JWKS (its
	// cache max age plus its refetch cooldown), and be less than
	// RotateEvery. The first key of a store signs at once.
	PublishAhead time.Duration
	// CheckEvery is how often Run reloads the keys and rotates when due. A
	// replica may go on signing with a replaced key for up to this long.
	CheckEvery time.Duration
	// Leeway is the most clock skew an edge allows when checking exp.
	Leeway time.Duration
	// RefreshGrace is how long after its exp the edge still accepts an
	// access token on the refresh route (it checks the signature, so the
	// key must stay published): the refresh token lifetime.
	RefreshGrace time.Duration
}

// Issuer signs access tokens with the active signing key: the newest one
// published for at least PublishAhead.
type Issuer struct {
	store store.SigningKeys
	cfg   Config
	log   *zap.Logger
	now   func() time.Time

	mu      sync.RWMutex
	current *signingKey
}

type signingKey struct {
	id      string
	private ed25519.PrivateKey
}

// NewIssuer returns an Issuer, creating the first signing key when the store
// has none and rotating when the newest is due.
func NewIssuer(ctx context.Context, s store.SigningKeys, cfg Config, log *zap.Logger) (*Issuer, error) {
	switch {
	case cfg.AccessTTL <= 0 || cfg.RotateEvery <= 0 || cfg.CheckEvery <= 0:
		return nil, errors.New("token: AccessTTL, RotateEvery and CheckEvery must be positive")
	case cfg.PublishAhead < 0 || cfg.Leeway < 0 || cfg.RefreshGrace < 0:
		return nil, errors.New("token: PublishAhead, Leeway and RefreshGrace must not be negative")
	case cfg.PublishAhead >= cfg.RotateEvery:
		return nil, errors.New("token: PublishAhead must be less than RotateEvery")
	}
	i := &Issuer{store: s, cfg: cfg, log: log, now: time.Now}
	if err := i.Refresh(ctx); err != nil {
		return nil, err
	}
	return i, nil
}

// Run calls Refresh every CheckEvery until ctx is done. Failures are logged
// and retried at the next tick; the Issuer keeps its current key meanwhile.
func (i *Issuer) Run(ctx context.Context) {
	t := time.NewTicker(i.cfg.CheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := i.Refresh(ctx); err != nil && ctx.Err() == nil {
				i.log.Error("signing key refresh failed", zap.Error(err))
			}
		}
	}
}

// Ready reports whether the Issuer has a signing key.
func (i *Issuer) Ready() bool {
	i.mu.RLock()
	defer i.mu.RUnlock()
	return i.current != nil
}

// Refresh loads the signing keys, adds one when the newest is older than
// RotateEvery minus PublishAhead (or there is none), switches to the active
// key, and deletes keys no token that may still be presented can have been
// signed with.
func (i *Issuer) Refresh(ctx context.Context) error {
	now := i.now()
	keys, err := i.store.ListSigningKeys(ctx)
	if err != nil {
		return err
	}
	if n := len(keys); n == 0 || !now.Before(keys[n-1].CreatedAt.Add(i.cfg.RotateEvery-i.cfg.PublishAhead)) {
		var gen int64 = 1
		if n > 0 {
			gen = keys[n-1].Generation + 1
		}
		k, err := newSigningKey(gen, now)
		if err != nil {
			return err
		}
		switch err := i.store.AddSigningKey(ctx, k); {
		case errors.Is(err, store.ErrConflict):
			// Another replica rotated first; use its key.
		case err != nil:
			return err
		default:
			i.log.Info("signing key added", zap.String("kid", k.ID), zap.Int64("generation", gen),
				zap.Time("signs_from", k.CreatedAt.Add(i.cfg.PublishAhead)))
		}
		if keys, err = i.store.ListSigningKeys(ctx); err != nil {
			return err
		}
	}
	active := i.active(keys, now)
	private, err := privateKey(active)
	if err != nil {
		return err
	}
	i.mu.Lock()
	switched := i.current == nil || i.current.id != active.ID
	i.current = &signingKey{id: active.ID, private: private}
	i.mu.Unlock()
	if switched {
		i.log.Info("signing with key", zap.String("kid", active.ID), zap.Int64("generation", active.Generation))
	}

	for j, k := range keys[:len(keys)-1] {
		if !i.published(keys[j+1], now) {
			if err := i.store.DeleteSigningKey(ctx, k.ID); err != nil {
				return err
			}
			i.log.Info("signing key deleted", zap.String("kid", k.ID))
		}
	}
	return nil
}

// active returns the key to sign with at now among keys (oldest generation
// first, at least one): the newest published for at least PublishAhead, or
// the oldest when none is yet (the first key of a store, which no edge can
// have been refused tokens of).
func (i *Issuer) active(keys []store.SigningKey, now time.Time) store.SigningKey {
	for _, k := range slices.Backward(keys) {
		if !now.Before(k.CreatedAt.Add(i.cfg.PublishAhead)) {
			return k
		}
	}
	return keys[0]
}

// published reports whether a key whose successor is next must still be
// published at now. The successor signs from PublishAhead after its
// creation; a replica may go on signing with the older key until CheckEvery
// after that; what it signs is accepted for AccessTTL plus Leeway, and on
// the refresh route for RefreshGrace more.
func (i *Issuer) published(next store.SigningKey, now time.Time) bool {
	c := i.cfg
	return now.Before(next.CreatedAt.Add(c.PublishAhead + c.CheckEvery + c.AccessTTL + c.Leeway + c.RefreshGrace))
}

// JWKS returns the JSON Web Key Set of the public keys that verify tokens
// that may still be valid, newest first.
func (i *Issuer) JWKS(ctx context.Context) ([]byte, error) {
	keys, err := i.store.ListSigningKeys(ctx)
	if err != nil {
		return nil, err
	}
	now := i.now()
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for j := len(keys) - 1; j >= 0; j-- {
		if j < len(keys)-1 && !i.published(keys[j+1], now) {
			continue
		}
		priv, err := privateKey(keys[j])
		if err != nil {
			return nil, err
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{
			Key:       priv.Public(),
			KeyID:     keys[j].ID,
			Algorithm: string(jose.EdDSA),
			Use:       "sig",
		})
	}
	return json.Marshal(set)
}

// newSigningKey makes a key of generation gen; its id is the RFC 7638
// thumbprint of the public key.
func newSigningKey(gen int64, now time.Time) (store.SigningKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return store.SigningKey{}, err
	}
	jwk := jose.JSONWebKey{Key: pub}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return store.SigningKey{}, err
	}
	return store.SigningKey{
		ID:         base64.RawURLEncoding.EncodeToString(tp),
		Generation: gen,
		Seed:       priv.Seed(),
		CreatedAt:  now,
	}, nil
}

func privateKey(k store.SigningKey) (ed25519.PrivateKey, error) {
	if len(k.Seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("token: signing key %s has a %d-byte seed", k.ID, len(k.Seed))
	}
	return ed25519.NewKeyFromSeed(k.Seed), nil
}
