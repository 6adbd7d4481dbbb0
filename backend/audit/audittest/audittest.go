// Package audittest holds sample audit records for the tests of several
// packages: a chain with every action, as the trail holds them.
package audittest

import (
	"net/netip"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/internal/contract"
)

// Ids the sample audit records carry.
const (
	Client       = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"
	Grant        = "11111111-2222-4333-8444-555555555555"
	CareContext  = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
	Request      = "0f0f0f0f-1e1e-4d2d-8c3c-4b4b4b4b4b4b"
	Subscription = "12345678-1234-4234-8234-123456789abc"
	Destination  = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
)

// Persons the sample records name: an operator and an auditor as their
// certificates name them, and a local user of hdc's direct mode.
var (
	Operator = audit.Person{Name: "alice@example.org", Serial: "5e1f", Role: contract.RoleOperator}
	Auditor  = audit.Person{Name: "bob@example.org", Serial: "a0b1", Role: contract.RoleAuditor}
	Direct   = audit.Person{Name: "root@host-1", Role: contract.RoleOperator, Direct: true}
)

// Records returns a chain of the workspace's records at time at, one
// of every action at least, as clients, parsers, the operator and the
// backend's jobs leave them, with a retention prune last: test data for
// the AuditEvent mapping.
func Records(workspace string, at time.Time) ([]audit.Record, error) {
	src := netip.MustParseAddr("203.0.113.7")
	care := audit.Entity{Kind: audit.EntityCareContext, ID: CareContext}
	sub := audit.Entity{Kind: audit.EntitySubscription, ID: Subscription}
	client := audit.Entity{Kind: audit.EntityClient, ID: Client}
	grant := audit.Entity{Kind: audit.EntityGrant, ID: Grant}
	key := audit.Entity{Kind: audit.EntityKey, ID: "k_2"}
	destination := audit.Entity{Kind: audit.EntityDestination, ID: Destination}
	events := []audit.Event{
		{Action: audit.Login, Outcome: audit.Success, Client: Client, Source: src, Kid: "k_1", Request: Request},
		{Action: audit.Login, Outcome: audit.Success, Client: Client, Grant: Grant, Source: src},
		{Action: audit.LoginFailed, Outcome: audit.Denied, Source: netip.MustParseAddr("2001:db8::1")},
		{Action: audit.Refresh, Outcome: audit.Success, Client: Client},
		{Action: audit.RefreshReuse, Outcome: audit.Denied, Client: Client},
		{Action: audit.RecordUpload, Outcome: audit.Success, Client: Client, Entity: care},
		{Action: audit.RecordRetrieve, Outcome: audit.Denied, Client: Client, Entity: care},
		{Action: audit.ResourcesSubmit, Outcome: audit.Success, Entity: care},
		{Action: audit.SubscriptionCreate, Outcome: audit.Success, Client: Client, Entity: sub},
		{Action: audit.SubscriptionDelete, Outcome: audit.Success, Client: Client, Entity: sub},
		{Action: audit.DeliveryDisabled, Outcome: audit.Success, Entity: sub},
		{Action: audit.ClientCreate, Outcome: audit.Success, Entity: client},
		{Action: audit.ClientDisable, Outcome: audit.Failed, Entity: client},
		{Action: audit.SharingGrant, Outcome: audit.Success, Entity: grant},
		{Action: audit.SharingRevoke, Outcome: audit.Success, Entity: grant},
		{Action: audit.KeyAdd, Outcome: audit.Success, Entity: key},
		{Action: audit.KeyRotate, Outcome: audit.Success, Entity: key, Replaced: []string{"k_1"}, Weakened: []string{"enc", "freshness"}},
		{Action: audit.KeyRetire, Outcome: audit.Success, Entity: key, Person: Operator},
		{Action: audit.KeeperRewrap, Outcome: audit.Success, Entity: audit.Entity{Kind: audit.EntityDataKey, ID: "0123456789abcdef"}, Person: Direct},
		{Action: audit.LoginFailed, Outcome: audit.Denied, Source: netip.MustParseAddr("2001:db8::1"), Count: 9},
		{Action: audit.SubscriptionDelete, Outcome: audit.Success, Entity: sub, Person: Operator},
		{Action: audit.CertificateRevoke, Outcome: audit.Success, Entity: audit.Entity{Kind: audit.EntityCertificate, ID: "7f0e"}, Person: Operator},
		{Action: audit.AuditSearch, Outcome: audit.Success, Entity: audit.Entity{Kind: audit.EntityWorkspace, ID: workspace}, Person: Auditor},
		{Action: audit.AuditExport, Outcome: audit.Success, Person: Auditor},
		{Action: audit.AuditVerify, Outcome: audit.Success, Person: Operator},
		{Action: audit.SubscriptionEnable, Outcome: audit.Success, Client: Client, Entity: sub},
		{Action: audit.SubscriptionDisable, Outcome: audit.Success, Client: Client, Entity: sub},
		{Action: audit.DeliveryDisabled, Outcome: audit.Success, Entity: sub, Reason: "failing"},
		{Action: audit.SigningKeyRotate, Outcome: audit.Success, Client: Client, Entity: sub},
		{Action: audit.DeliveryRedeliver, Outcome: audit.Success, Client: Client, Entity: sub},
		{Action: audit.DeliveryRecover, Outcome: audit.Success, Entity: sub, Person: Operator},
		{Action: audit.ClientLimitsSet, Outcome: audit.Success, Entity: client, Person: Operator},
		{Action: audit.DestinationGrant, Outcome: audit.Success, Entity: destination, Person: Operator},
		{Action: audit.DestinationRevoke, Outcome: audit.Success, Entity: destination, Person: Operator},
		{Action: audit.ClientUpdate, Outcome: audit.Success, Entity: client, Person: Operator, Changes: []audit.Change{
			{Field: audit.ChangeName, Before: "Clinic 7", After: "Clinic Seven"},
			{Field: audit.ChangeLabel + "env", Before: "staging", After: "prod"},
			{Field: audit.ChangeLabel + "tier", After: "gold"},
		}},
		{Action: audit.ClientLimitsSet, Outcome: audit.Success, Entity: client, Person: Operator, Changes: []audit.Change{
			{Field: audit.ChangeLimits, After: `{"rates":{"reads":{"per_second":5,"burst":10}}}`},
		}},
		{Action: audit.ClientLimitsClear, Outcome: audit.Success, Entity: client, Person: Operator, Changes: []audit.Change{
			{Field: audit.ChangeLimits, Before: `{"rates":{"reads":{"per_second":5,"burst":10}}}`},
		}},
		{Action: audit.SubscriptionEnable, Outcome: audit.Success, Entity: sub, Person: Operator},
		{Action: audit.SubscriptionTest, Outcome: audit.Success, Entity: sub, Person: Operator},
	}
	var recs []audit.Record
	var last audit.Link
	for _, e := range events {
		e.At, e.Workspace = at, workspace
		r, err := audit.Next(last, e)
		if err != nil {
			return nil, err
		}
		recs = append(recs, r)
		last = r.Link()
	}
	prune, err := audit.Next(last, audit.Event{At: at, Action: audit.RetentionPrune, Outcome: audit.Success, Workspace: workspace,
		Pruned: audit.Pruned{From: 1, Last: audit.Link{Seq: 3, Hash: recs[2].Hash()}}})
	if err != nil {
		return nil, err
	}
	return append(recs, prune), nil
}
