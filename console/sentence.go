package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/fhirview"
)

// RecordOf reads a record as the audit search lists it (an item of
// adminapi.AuditPage: its canonical form with its "hash" added as the last
// member), checked as the store's canonical form is.
func RecordOf(listed json.RawMessage) (audit.Record, error) {
	i := bytes.LastIndex(listed, []byte(`,"hash":"`))
	if i < 0 {
		return audit.Record{}, errors.New("console: not a listed audit record")
	}
	return audit.Parse(append(listed[:i:i], '}'))
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
	audit.KeyRotate: "rotated to the new key %s", audit.KeyRetire: "retired the key %s",
	audit.RetentionPrune: "pruned the trail", audit.KeeperRewrap: "rewrapped the data key under another keeper",
	audit.SigningKeyRotate: "set the signing key of the subscription %s", audit.DeliveryRedeliver: "redelivered a delivery of the subscription %s",
	audit.DeliveryRecover:   "recovered the failed deliveries of the subscription %s",
	audit.CertificateRevoke: "revoked the certificate %s", audit.AuditSearch: "searched the audit trail",
	audit.DestinationGrant: "granted the webhook destination %s", audit.DestinationRevoke: "revoked the webhook destination %s",
	audit.AuditExport: "exported the audit trail", audit.AuditVerify: "verified the audit trail",
	audit.ClientUpdate: "changed the client %s", audit.ClientLimitsSet: "set the limits of the client %s",
	audit.ClientLimitsClear: "cleared the limits of the client %s", audit.SubscriptionTest: "sent a test event to the subscription %s",
}

// Sentence reads a record as a sentence: who did what to which entity, in
// which workspace, when ("alice@example.org rotated to the new key k-2,
// retiring k-1 in acme at 2026-03-15 14:02:00 UTC"), what an operator's
// change moved, and whether it was refused or failed. A client is named by
// its name in names (by client id) when it has one, else by its id.
func Sentence(r audit.Record, names map[string]string) string {
	verb, ok := verbs[r.Action]
	if !ok {
		verb = string(r.Action) + " %s"
	}
	entity := r.Entity.ID
	if name := names[entity]; r.Entity.Kind == audit.EntityClient && name != "" {
		entity = name
	}
	s := agentName(r, names) + " " + trimEntity(verb, entity)
	if len(r.Replaced) > 0 {
		s += ", retiring " + strings.Join(r.Replaced, ", ")
	}
	if len(r.Changes) > 0 {
		s += ": " + changesText(r.Changes)
	}
	if r.Workspace != "" {
		s += " in " + r.Workspace
	}
	s += " at " + when(r.At)
	switch r.Outcome {
	case audit.Denied:
		s += " (refused)"
	case audit.Failed:
		s += " (failed)"
	}
	return s
}

// trimEntity puts id in verb's place for it, or drops the place.
func trimEntity(verb, id string) string {
	out := bytes.ReplaceAll([]byte(verb), []byte("%s"), []byte(id))
	return string(bytes.TrimSpace(out))
}

// changesText says what each change moved: "name Clinic 7 → Clinic
// Seven, label env set to prod, label tier removed (was gold)".
func changesText(changes []audit.Change) string {
	parts := make([]string, 0, len(changes))
	for _, c := range changes {
		field := strings.Replace(c.Field, audit.ChangeLabel, "label ", 1)
		switch {
		case c.Before == "":
			parts = append(parts, field+" set to "+c.After)
		case c.After == "":
			parts = append(parts, field+" removed (was "+c.Before+")")
		default:
			parts = append(parts, field+" "+c.Before+" → "+c.After)
		}
	}
	return strings.Join(parts, ", ")
}

// agentName names who acted: the person, the client, or the backend.
func agentName(r audit.Record, names map[string]string) string {
	switch {
	case r.Person.Name != "":
		return r.Person.Name
	case names[r.Client] != "":
		return names[r.Client]
	case r.Client != "":
		return "the client " + r.Client
	case r.Action == audit.ResourcesSubmit:
		return "a parser"
	case r.Action == audit.LoginFailed:
		return "an unknown client"
	}
	return "the backend"
}

// fhirJSON is r as a FHIR AuditEvent, indented: as the audit export
// writes it.
func fhirJSON(r audit.Record) string {
	b, err := fhirview.AuditEvent(r)
	if err != nil {
		return ""
	}
	return indent(b)
}
