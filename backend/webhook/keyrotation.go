package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/strictjson"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// generatedKeySize is the bytes of a generated signing key.
const generatedKeySize = 32

// KeyRotation serves POST …/subscriptions/{id}/signing-key: it sets the
// subscription's signing key, given or generated, and keeps the one it
// replaces for a grace, during which Standard Webhooks deliveries carry
// both signatures (store.Subscriptions.RotateSigningKey).
type KeyRotation struct {
	store store.Subscriptions
	grace time.Duration
	log   *zap.Logger
	now   func() time.Time
	http  http.Handler
}

// NewKeyRotation returns the handler over st whose previous keys sign for
// grace after a rotation. A rotation sent with an Idempotency-Key is made
// once: a client whose answer was lost sends it again and reads the same
// generated key, instead of replacing the key it never saw (which would
// drop its old key from the signatures at once).
func NewKeyRotation(st store.Subscriptions, idem store.Idempotency, grace time.Duration, log *zap.Logger) *KeyRotation {
	k := &KeyRotation{store: st, grace: grace, log: log, now: time.Now}
	problems := &web.Problems{Known: web.ErrorMap{{Err: store.ErrNotFound, Problem: web.NotFound()}}, Log: log}
	once := web.Idempotent{Store: idem, Problems: problems, Owner: clientOwner}
	k.http = once.Wrap(problems.Handler("rotate_key", k.serve))
	return k
}

// KeyRotated is the answer to a rotation.
type KeyRotated struct {
	// SigningKey is the generated key, shown this once; absent when the
	// client gave the key.
	SigningKey string `json:"signing_key,omitempty"`
	// PreviousKeyExpiresAt is when deliveries stop carrying the replaced
	// key's signature; null when the subscription had no key.
	PreviousKeyExpiresAt *time.Time `json:"previous_key_expires_at"`
}

// ServeHTTP serves the route.
func (k *KeyRotation) ServeHTTP(w http.ResponseWriter, r *http.Request) { k.http.ServeHTTP(w, r) }

func (k *KeyRotation) serve(w http.ResponseWriter, r *http.Request) error {
	caller, _ := web.CallerFrom(r.Context())
	body, p := web.ReadJSON(w, r)
	if p != nil {
		return p
	}
	given, err := parseKeyRequest(body)
	if err != nil {
		return web.DecodeProblem(err)
	}
	id := r.PathValue("id")
	sub, err := k.store.GetSubscription(r.Context(), caller.WorkspaceID, id)
	if err != nil {
		return err
	}
	key, out := given, KeyRotated{}
	if key == "" {
		key = GenerateSigningKey()
		out.SigningKey = key
	}
	now := k.now()
	until := now.Add(k.grace).UTC()
	if sub.SigningKey != "" {
		out.PreviousKeyExpiresAt = &until
	}
	change := store.SigningKeyChange{Key: key, PreviousUntil: until,
		Event: SubscriptionEvent(web.AuditEvent(r), audit.SigningKeyRotate, id, now)}
	if err := k.store.RotateSigningKey(r.Context(), caller.WorkspaceID, id, change); err != nil {
		return err
	}
	telemetry.Logger(r.Context(), k.log).Info("subscription signing key rotated", zap.String("workspace_id", caller.WorkspaceID),
		zap.String("subscription_id", id), zap.Bool("generated", given == ""), zap.Bool("previous_key", sub.SigningKey != ""))
	web.WriteJSON(w, http.StatusOK, out)
	return nil
}

// parseKeyRequest reads {"signing_key": "<key>"} (CheckSigningKey) or {}
// (generate one), returning the key given or "".
func parseKeyRequest(body []byte) (string, error) {
	var req struct {
		SigningKey *string `json:"signing_key"`
	}
	if err := strictjson.Unmarshal(body, &req); err != nil {
		return "", err
	}
	if req.SigningKey == nil {
		return "", nil
	}
	return *req.SigningKey, CheckSigningKey(*req.SigningKey)
}

// GenerateSigningKey returns a new Standard Webhooks secret: whsec_ and
// 32 random bytes in standard base64.
func GenerateSigningKey() string {
	b := make([]byte, generatedKeySize)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return contract.WebhookSecretPrefix + base64.StdEncoding.EncodeToString(b)
}
