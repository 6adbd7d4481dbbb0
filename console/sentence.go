package console

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/fhirview"
)

// auditEvent is what a sentence reads of a FHIR AuditEvent.
type auditEvent struct {
	Extension []struct {
		URL       string `json:"url"`
		ValueCode string `json:"valueCode"`
	} `json:"extension"`
	Recorded string `json:"recorded"`
	Outcome  string `json:"outcome"`
	Source   struct {
		Site string `json:"site"`
	} `json:"source"`
	Agent []struct {
		Name string `json:"name"`
		Who  *struct {
			Identifier struct {
				Value string `json:"value"`
			} `json:"identifier"`
			Display string `json:"display"`
		} `json:"who"`
	} `json:"agent"`
	Entity []struct {
		What *struct {
			Identifier struct {
				Value string `json:"value"`
			} `json:"identifier"`
		} `json:"what"`
	} `json:"entity"`
}

// verbs words each action of the trail, %s its entity.
var verbs = map[audit.Action]string{
	audit.Login: "logged in", audit.LoginFailed: "failed to log in", audit.Refresh: "refreshed a token",
	audit.RefreshReuse: "reused a rotated refresh token", audit.RecordUpload: "uploaded the record %s",
	audit.RecordRetrieve: "retrieved the record %s", audit.ResourcesSubmit: "attached resources to the record %s",
	audit.SubscriptionCreate: "created the subscription %s", audit.SubscriptionDelete: "deleted the subscription %s",
	audit.DeliveryDisabled: "disabled the subscription %s", audit.SubscriptionEnable: "enabled the subscription %s",
	audit.SubscriptionDisable: "disabled the subscription %s", audit.ClientCreate: "created the client %s",
	audit.ClientDisable: "disabled the client %s", audit.SharingGrant: "granted sharing %s",
	audit.SharingRevoke: "revoked the sharing grant %s", audit.KeyAdd: "added the key %s",
	audit.KeyRotate: "rotated the keys of %s", audit.KeyRetire: "retired the key %s",
	audit.RetentionPrune: "pruned the trail", audit.KeeperRewrap: "rewrapped the data key under another keeper",
	audit.CertificateRevoke: "revoked the certificate %s", audit.AuditSearch: "searched the audit trail",
	audit.AuditExport: "exported the audit trail", audit.AuditVerify: "verified the audit trail",
}

// Sentence reads a FHIR AuditEvent as a sentence: who did what to which
// entity, in which workspace, when ("alice@example.org rotated the keys of
// clinic-7 in acme at 2026-03-15 14:02:00 UTC"), and whether it was refused or failed.
func Sentence(raw json.RawMessage) string {
	var ev auditEvent
	if json.Unmarshal(raw, &ev) != nil {
		return "an audit event the console cannot read"
	}
	var action audit.Action
	for _, x := range ev.Extension {
		if x.URL == fhirview.AuditActionExtension {
			action = audit.Action(x.ValueCode)
		}
	}
	verb, ok := verbs[action]
	if !ok {
		verb = string(action) + " %s"
	}
	entity := ""
	if len(ev.Entity) > 0 && ev.Entity[0].What != nil {
		entity = ev.Entity[0].What.Identifier.Value
	}
	s := agentName(ev) + " " + strings.TrimSpace(strings.ReplaceAll(verb, "%s", entity))
	if ev.Source.Site != "" && ev.Source.Site != "installation" {
		s += " in " + strings.TrimPrefix(ev.Source.Site, "workspace ")
	}
	if t, err := time.Parse(time.RFC3339Nano, ev.Recorded); err == nil {
		s += " at " + when(t)
	}
	switch ev.Outcome {
	case "4":
		s += " (refused)"
	case "8":
		s += " (failed)"
	}
	return s
}

// agentName names who acted: the person, the client, or what the record
// displays.
func agentName(ev auditEvent) string {
	if len(ev.Agent) == 0 {
		return "someone"
	}
	a := ev.Agent[0]
	switch {
	case a.Name != "":
		return a.Name
	case a.Who != nil && a.Who.Identifier.Value != "":
		return "the client " + a.Who.Identifier.Value
	case a.Who != nil && a.Who.Display != "":
		return a.Who.Display
	}
	return "someone"
}
