package audit

import "github.com/health-data-connect/hdc/internal/contract"

// Action is what happened: one of the constants below, which are the
// whole set.
type Action string

// Actions of clients, seen by the backend.
const (
	Login              Action = "login"
	LoginFailed        Action = "login_failed"
	Refresh            Action = "refresh"
	RefreshReuse       Action = "refresh_reuse" // a rotated refresh token came back: its family is revoked
	RecordUpload       Action = "record_upload"
	RecordRetrieve     Action = "record_retrieve"
	ResourcesSubmit    Action = "resources_submit" // a parser attached resources to a record
	SubscriptionCreate Action = "subscription_create"
	SubscriptionDelete Action = "subscription_delete"
	DeliveryDisabled   Action = "delivery_disabled" // the backend disabled a subscription (Event.Reason: gone, failing)
	// SubscriptionEnable and SubscriptionDisable: a client turned its
	// subscription on or off (PATCH); an operator enabled a disabled one
	// through the Admin API (the record names the person).
	SubscriptionEnable  Action = "subscription_enable"
	SubscriptionDisable Action = "subscription_disable"
	// SigningKeyRotate: a client set its subscription's signing key (the
	// replaced one signs on for a grace).
	SigningKeyRotate Action = "signing_key_rotate"
	// DeliveryRedeliver and DeliveryRecover: a client, or an operator
	// through the Admin API, sent one delivery of a subscription again, or
	// every one that failed since a time.
	DeliveryRedeliver Action = "delivery_redeliver"
	DeliveryRecover   Action = "delivery_recover"
	// SubscriptionTest: an operator sent a subscription a test event
	// through the Admin API (a client's test events are not recorded).
	SubscriptionTest Action = "subscription_test"
)

// Actions of operators (the hdc CLI) and of the backend's own jobs.
const (
	ClientCreate  Action = "client_create"
	ClientDisable Action = "client_disable"
	SharingGrant  Action = "sharing_grant"
	SharingRevoke Action = "sharing_revoke"
	KeyAdd        Action = "key_add"
	KeyRotate     Action = "key_rotate"
	KeyRetire     Action = "key_retire"
	// ClientUpdate: an operator changed a client's name or labels (the
	// record's Changes say which, before and after).
	ClientUpdate Action = "client_update"
	// ClientLimitsSet: an operator set a client's limits, and
	// ClientLimitsClear removed them (Changes: the limits before and
	// after). Records written before ClientLimitsClear existed record a
	// clearing as a ClientLimitsSet, without changes.
	ClientLimitsSet   Action = "client_limits_set"
	ClientLimitsClear Action = "client_limits_clear"
	// DestinationGrant and DestinationRevoke: an operator granted a
	// workspace a private receiver of its webhooks, or revoked the grant
	// (the grant is the entity).
	DestinationGrant  Action = "webhook_destination_grant"
	DestinationRevoke Action = "webhook_destination_revoke"
	RetentionPrune    Action = "retention_prune" // retention removed a prefix of the chain
	KeeperRewrap      Action = "keeper_rewrap"   // the store's data key wrapped under another keeper
	// CertificateRevoke: an operator revoked a certificate of the hop's
	// authority (its serial is the entity).
	CertificateRevoke Action = "certificate_revoke"
)

// Reads of the audit trail through the Admin API, which the trail records
// too: who searched, exported or verified it, and which workspace's trail
// (the entity; none for every trail).
const (
	AuditSearch Action = "audit_search"
	AuditExport Action = "audit_export"
	AuditVerify Action = "audit_verify"
)

// rule is what an action's event may carry.
type rule struct {
	// entity is the kind of entity the action concerns, empty for none.
	entity EntityKind
	// anywhere lets the event belong to the installation's trail (no
	// workspace).
	anywhere bool
	// refusal: the action is itself a refusal, so its outcome is not
	// Success.
	refusal bool
	// by are the roles of the persons who may be named as the action's
	// author (Event.Person): an operator for a change, an operator or an
	// auditor for a read of the trail; none for a client's action or the
	// backend's own.
	by []contract.Role
	// changes are the fields the event's Changes may name (ChangeLabel:
	// any label); none for an action that records no values.
	changes []string
}

// Who may be an action's Person.
var (
	operators = []contract.Role{contract.RoleOperator}
	readers   = []contract.Role{contract.RoleOperator, contract.RoleAuditor}
)

var rules = map[Action]rule{
	Login:               {},
	LoginFailed:         {anywhere: true, refusal: true},
	Refresh:             {},
	RefreshReuse:        {refusal: true},
	RecordUpload:        {entity: EntityCareContext},
	RecordRetrieve:      {entity: EntityCareContext},
	ResourcesSubmit:     {entity: EntityCareContext},
	SubscriptionCreate:  {entity: EntitySubscription},
	SubscriptionDelete:  {entity: EntitySubscription, by: operators},
	DeliveryDisabled:    {entity: EntitySubscription},
	SubscriptionEnable:  {entity: EntitySubscription, by: operators},
	SubscriptionDisable: {entity: EntitySubscription},
	SigningKeyRotate:    {entity: EntitySubscription},
	DeliveryRedeliver:   {entity: EntitySubscription, by: operators},
	DeliveryRecover:     {entity: EntitySubscription, by: operators},
	SubscriptionTest:    {entity: EntitySubscription, by: operators},
	ClientCreate:        {entity: EntityClient, by: operators},
	ClientDisable:       {entity: EntityClient, by: operators},
	SharingGrant:        {entity: EntityGrant, by: operators},
	SharingRevoke:       {entity: EntityGrant, by: operators},
	KeyAdd:              {entity: EntityKey, anywhere: true, by: operators}, // a key of a client the database does not know
	KeyRotate:           {entity: EntityKey, anywhere: true, by: operators},
	KeyRetire:           {entity: EntityKey, anywhere: true, by: operators},
	ClientUpdate:        {entity: EntityClient, by: operators, changes: []string{ChangeName, ChangeLabel}},
	ClientLimitsSet:     {entity: EntityClient, by: operators, changes: []string{ChangeLimits}},
	ClientLimitsClear:   {entity: EntityClient, by: operators, changes: []string{ChangeLimits}},
	DestinationGrant:    {entity: EntityDestination, by: operators},
	DestinationRevoke:   {entity: EntityDestination, by: operators},
	RetentionPrune:      {anywhere: true},
	KeeperRewrap:        {entity: EntityDataKey, anywhere: true, by: operators},
	CertificateRevoke:   {entity: EntityCertificate, anywhere: true, by: operators},
	AuditSearch:         {entity: EntityWorkspace, anywhere: true, by: readers},
	AuditExport:         {entity: EntityWorkspace, anywhere: true, by: readers},
	AuditVerify:         {entity: EntityWorkspace, anywhere: true, by: readers},
}

// Valid reports whether a is one of the actions.
func (a Action) Valid() bool {
	_, ok := rules[a]
	return ok
}

// Outcome is how an action ended.
type Outcome string

// Outcomes.
const (
	// Success: the action was done.
	Success Outcome = "success"
	// Denied: the action was refused (bad credentials, no such record,
	// no right to it).
	Denied Outcome = "denied"
	// Failed: the server failed to do it.
	Failed Outcome = "failed"
)

// Valid reports whether o is one of the outcomes.
func (o Outcome) Valid() bool { return o == Success || o == Denied || o == Failed }
