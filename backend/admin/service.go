package admin

import (
	"context"
	"time"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/trail"
	"github.com/health-data-connect/hdc/backend/fleet"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
)

// Store is what the service reads itself, besides what its services own:
// the workspaces and clients it lists, the deny-list, the fleet, the
// webhook subscriptions and their delivery logs, the clients' limits, the
// webhook destinations granted to workspaces, the people who used the
// API, and the trail, which records an operator's test event.
type Store interface {
	GetWorkspace(ctx context.Context, id string) (store.Workspace, error)
	ListWorkspaces(ctx context.Context, after string, limit int) ([]store.Workspace, error)
	GetClient(ctx context.Context, id string) (store.Client, error)
	store.Revocations
	fleet.Store
	store.Subscriptions
	OutboxStats(ctx context.Context) (store.OutboxStats, error)
	store.DeliveryLog
	store.ClientLimits
	store.WebhookDestinations
	store.People
	store.AuditAppender
}

// Service is the operator's and the auditor's side of the gateway: it
// implements adminapi.API, each method a route of the Admin API and a
// command of hdc, and takes the person it acts for from ctx
// (audit.PersonFrom). The rules and the audit records are those of the
// services it calls; it maps their answers to the API's wire types.
type Service struct {
	st       Store
	identity *identity.Service
	keys     *keyadmin.Service
	fleet    *fleet.Service
	webhooks *webhook.Service
	log      *webhook.Log
	trail    *trail.Service
	grants   *webhook.Grants     // nil: no copy to tell of a change (direct mode)
	tests    *webhook.TestEvents // nil: no test event is sent (direct mode)
	people   *sightings
	now      func() time.Time
}

var _ adminapi.API = (*Service)(nil)

// New returns the service over st and the services that own the rules.
func New(st Store, ids *identity.Service, keys *keyadmin.Service, opts ...Option) *Service {
	s := &Service{st: st, identity: ids, keys: keys, fleet: fleet.New(st, fleet.DefaultForgetAfter), webhooks: webhook.NewService(st), log: webhook.NewLog(st), now: time.Now}
	for _, o := range opts {
		o(s)
	}
	s.people = newSightings(st, func() time.Time { return s.now() })
	return s
}

// WithGrants is the backend's copy of the webhook destinations granted,
// which a grant or a revocation made through the service makes it read
// again: the change is then in force on this backend at once.
func WithGrants(g *webhook.Grants) Option { return func(s *Service) { s.grants = g } }

// Whoami returns the person ctx acts for: who the API takes its caller
// for.
func (s *Service) Whoami(ctx context.Context) (adminapi.Person, error) {
	p, err := audit.PersonFrom(ctx)
	return personOut(p), err
}

// personOut is p as the API shows a person.
func personOut(p audit.Person) adminapi.Person {
	return adminapi.Person{Name: p.Name, Role: string(p.Role), Serial: p.Serial, Direct: p.Direct}
}
