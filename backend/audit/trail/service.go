package trail

import (
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// Config is what verification is held to: the backend's own settings,
// or in hdc's direct mode its flags.
type Config struct {
	// Checkpoints is the bucket URL of the signed checkpoints of the
	// trails' heads (HDC_AUDIT_CHECKPOINTS); "" or checkpoint.Log for
	// none: verification then cannot show a deleted tail or trail.
	Checkpoints string
	// CheckpointKey verifies the checkpoints' signatures
	// (sealed.Store.CheckpointKey).
	CheckpointKey []byte
	// Retention is the backend's audit retention (HDC_AUDIT_RETENTION):
	// no prune may have removed a younger record. 0 checks no bound.
	Retention time.Duration
}

// Service searches, exports and verifies the audit trails of a store.
type Service struct {
	st  store.Audit
	cfg Config
	now func() time.Time
}

// New returns the service over the trails of st, verifying against cfg.
func New(st store.Audit, cfg Config) *Service {
	return &Service{st: st, cfg: cfg, now: time.Now}
}
