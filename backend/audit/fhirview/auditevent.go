package fhirview

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/fhir"
)

// Code systems and identifiers of the AuditEvent mapping (the table is in
// the package doc).
const (
	// DICOMSystem is DICOM's controlled terminology, which holds the
	// audit event types and subtypes.
	DICOMSystem = "http://dicom.nema.org/resources/ontology/DCM"
	// AuditEventTypeSystem is FHIR's audit event type code system ("rest").
	AuditEventTypeSystem = "http://terminology.hl7.org/CodeSystem/audit-event-type"
	// RestfulInteractionSystem holds FHIR's RESTful interactions.
	RestfulInteractionSystem = "http://hl7.org/fhir/restful-interaction"
	// SecuritySourceTypeSystem holds the kinds of audit sources.
	SecuritySourceTypeSystem = "http://terminology.hl7.org/CodeSystem/security-source-type"
	// AuditEntityTypeSystem holds the kinds of audited entities.
	AuditEntityTypeSystem = "http://terminology.hl7.org/CodeSystem/audit-entity-type"
	// ObjectRoleSystem holds the roles of audited entities.
	ObjectRoleSystem = "http://terminology.hl7.org/CodeSystem/object-role"

	// ClientSystem is the identifier system of client ids.
	ClientSystem = "tag:health-data-connect,2026:client"
	// CareContextSystem is the identifier system of care_context_ids.
	CareContextSystem = "tag:health-data-connect,2026:care-context"
	// SubscriptionSystem is the identifier system of webhook subscription ids.
	SubscriptionSystem = "tag:health-data-connect,2026:subscription"
	// GrantSystem is the identifier system of sharing grant ids.
	GrantSystem = "tag:health-data-connect,2026:sharing-grant"
	// KidSystem is the identifier system of shared-key ids (kids).
	KidSystem = "tag:health-data-connect,2026:kid"
	// PersonSystem is the identifier system of persons, operators and
	// auditors, by the name their certificate gives them (or user@host
	// for a command run against the database directly).
	PersonSystem = "tag:health-data-connect,2026:person"
	// WorkspaceSystem is the identifier system of workspace ids.
	WorkspaceSystem = "tag:health-data-connect,2026:workspace"
	// CertificateSystem is the identifier system of certificates of the
	// hop's authority, by serial number in lower-case hex.
	CertificateSystem = "tag:health-data-connect,2026:certificate"
	// DestinationSystem is the identifier system of the private receivers
	// operators grant workspaces (webhook destinations).
	DestinationSystem = "tag:health-data-connect,2026:webhook-destination"
	// AdminRoleSystem holds the roles of persons: operator, auditor
	// (contract.Role).
	AdminRoleSystem = "tag:health-data-connect,2026:admin-role"
	// ExtraSecurityRoleSystem is FHIR's extra security role types, which
	// hold "humanuser".
	ExtraSecurityRoleSystem = "http://terminology.hl7.org/CodeSystem/extra-security-role-type"
	// DirectExtension marks, on an agent, a person who ran a command
	// against the database directly (hdc's direct mode) rather than
	// through the Admin API with a certificate.
	DirectExtension = "tag:health-data-connect,2026:fhir:direct"
	// DataKeySystem is the identifier system of the store's data keys'
	// ids (package keeper).
	DataKeySystem = "tag:health-data-connect,2026:data-key"
	// RequestSystem is the identifier system of request ids
	// (X-Hdc-Request-Id), which the edge's and the backend's logs carry.
	RequestSystem = "tag:health-data-connect,2026:request-id"
	// ObserverSystem is the identifier system of the audit source.
	ObserverSystem = "tag:health-data-connect,2026:audit-source"
	// ObserverBackend is the audit source: the backend, which writes
	// every record.
	ObserverBackend = "hdc-backend"
	// AuditActionExtension carries the trail's own action name
	// (audit.Action) on each AuditEvent.
	AuditActionExtension = "tag:health-data-connect,2026:fhir:audit-action"
	// AuditSeqExtension carries the record's seq in its workspace's chain.
	AuditSeqExtension = "tag:health-data-connect,2026:fhir:audit-seq"
	// AuditCountExtension carries, on a record that stands for several
	// refusals of one kind from one source and actor, how many.
	AuditCountExtension = "tag:health-data-connect,2026:fhir:audit-count"
)

// auditSpace namespaces the ids of AuditEvents.
var auditSpace = fhir.Namespace("AuditEvent")

// AuditEventID returns the id of the AuditEvent of the workspace's record
// seq: stable, so that a record has the same id in every answer and
// export.
func AuditEventID(workspace string, seq int64) string {
	return uuid.NewSHA1(auditSpace, []byte(workspace+"/"+strconv.FormatInt(seq, 10))).String()
}

// auditMapping is an action's type, subtype and FHIR action.
type auditMapping struct {
	typ     fhir.Coding
	subtype *fhir.Coding
	action  string
}

var (
	dcmUserAuth  = fhir.Coding{System: DICOMSystem, Code: "110114", Display: "User Authentication"}
	dcmSecurity  = fhir.Coding{System: DICOMSystem, Code: "110113", Display: "Security Alert"}
	dcmPatient   = fhir.Coding{System: DICOMSystem, Code: "110110", Display: "Patient Record"}
	dcmAppActive = fhir.Coding{System: DICOMSystem, Code: "110100", Display: "Application Activity"}
	dcmLogUsed   = fhir.Coding{System: DICOMSystem, Code: "110101", Display: "Audit Log Used"}
	rest         = fhir.Coding{System: AuditEventTypeSystem, Code: "rest", Display: "RESTful Operation"}
	dcmLogin     = &fhir.Coding{System: DICOMSystem, Code: "110122", Display: "Login"}
	dcmUserAttrs = &fhir.Coding{System: DICOMSystem, Code: "110137", Display: "User Security Attributes Changed"}
	dcmRoles     = &fhir.Coding{System: DICOMSystem, Code: "110136", Display: "Security Roles Changed"}
	// dcmSecurityConfig is DICOM's "Security Configuration" (CID 402).
	dcmSecurityConfig = &fhir.Coding{System: DICOMSystem, Code: "110129", Display: "Security Configuration"}
	restCreate        = &fhir.Coding{System: RestfulInteractionSystem, Code: "create", Display: "create"}
	restRead          = &fhir.Coding{System: RestfulInteractionSystem, Code: "read", Display: "read"}
	restUpdate        = &fhir.Coding{System: RestfulInteractionSystem, Code: "update", Display: "update"}
	restDelete        = &fhir.Coding{System: RestfulInteractionSystem, Code: "delete", Display: "delete"}
	restSearch        = &fhir.Coding{System: RestfulInteractionSystem, Code: "search-type", Display: "search type"}
	auditMappings     = map[audit.Action]auditMapping{
		audit.Login:               {dcmUserAuth, dcmLogin, "E"},
		audit.LoginFailed:         {dcmUserAuth, dcmLogin, "E"},
		audit.Refresh:             {dcmUserAuth, dcmLogin, "E"},
		audit.RefreshReuse:        {dcmSecurity, dcmLogin, "E"},
		audit.RecordUpload:        {dcmPatient, restCreate, "C"},
		audit.RecordRetrieve:      {dcmPatient, restRead, "R"},
		audit.ResourcesSubmit:     {dcmPatient, restUpdate, "U"},
		audit.SubscriptionCreate:  {rest, restCreate, "C"},
		audit.SubscriptionDelete:  {rest, restDelete, "D"},
		audit.DeliveryDisabled:    {dcmAppActive, nil, "U"},
		audit.SubscriptionEnable:  {rest, restUpdate, "U"},
		audit.SubscriptionDisable: {rest, restUpdate, "U"},
		audit.SigningKeyRotate:    {dcmSecurity, dcmSecurityConfig, "U"},
		audit.DeliveryRedeliver:   {dcmAppActive, nil, "E"},
		audit.DeliveryRecover:     {dcmAppActive, nil, "E"},
		audit.SubscriptionTest:    {dcmAppActive, nil, "E"},
		audit.ClientCreate:        {dcmSecurity, dcmUserAttrs, "C"},
		audit.ClientDisable:       {dcmSecurity, dcmUserAttrs, "U"},
		audit.SharingGrant:        {dcmSecurity, dcmRoles, "C"},
		audit.SharingRevoke:       {dcmSecurity, dcmRoles, "U"},
		audit.KeyAdd:              {dcmSecurity, dcmUserAttrs, "C"},
		audit.KeyRotate:           {dcmSecurity, dcmUserAttrs, "U"},
		audit.KeyRetire:           {dcmSecurity, dcmUserAttrs, "U"},
		audit.ClientUpdate:        {dcmSecurity, dcmUserAttrs, "U"},
		audit.ClientLimitsSet:     {dcmSecurity, dcmSecurityConfig, "U"},
		audit.ClientLimitsClear:   {dcmSecurity, dcmSecurityConfig, "U"},
		audit.DestinationGrant:    {dcmSecurity, dcmSecurityConfig, "C"},
		audit.DestinationRevoke:   {dcmSecurity, dcmSecurityConfig, "U"},
		audit.RetentionPrune:      {dcmLogUsed, nil, "D"},
		audit.KeeperRewrap:        {dcmSecurity, dcmSecurityConfig, "U"},
		audit.CertificateRevoke:   {dcmSecurity, dcmUserAttrs, "U"},
		audit.AuditSearch:         {dcmLogUsed, restSearch, "E"},
		audit.AuditExport:         {dcmLogUsed, restRead, "R"},
		audit.AuditVerify:         {dcmLogUsed, nil, "E"},
	}
)

// auditOutcomes maps the trail's outcomes to FHIR's
// audit-event-outcome codes.
var auditOutcomes = map[audit.Outcome]string{
	audit.Success: "0", // success
	audit.Denied:  "4", // minor failure: refused
	audit.Failed:  "8", // serious failure: the server failed
}

// entitySystems names the identifier system of each entity kind, and
// entityTypes its audit-entity-type (1 person, 2 system object).
var (
	entitySystems = map[audit.EntityKind]string{
		audit.EntityCareContext:  CareContextSystem,
		audit.EntitySubscription: SubscriptionSystem,
		audit.EntityClient:       ClientSystem,
		audit.EntityGrant:        GrantSystem,
		audit.EntityKey:          KidSystem,
		audit.EntityDataKey:      DataKeySystem,
		audit.EntityWorkspace:    WorkspaceSystem,
		audit.EntityCertificate:  CertificateSystem,
		audit.EntityDestination:  DestinationSystem,
	}
	entityRoles = map[audit.EntityKind]fhir.Coding{
		audit.EntityCareContext:  {System: ObjectRoleSystem, Code: "4", Display: "Domain Resource"},
		audit.EntitySubscription: {System: ObjectRoleSystem, Code: "4", Display: "Domain Resource"},
		audit.EntityClient:       {System: ObjectRoleSystem, Code: "6", Display: "User"},
		audit.EntityGrant:        {System: ObjectRoleSystem, Code: "13", Display: "Security Resource"},
		audit.EntityKey:          {System: ObjectRoleSystem, Code: "13", Display: "Security Resource"},
		audit.EntityDataKey:      {System: ObjectRoleSystem, Code: "13", Display: "Security Resource"},
		audit.EntityWorkspace:    {System: ObjectRoleSystem, Code: "13", Display: "Security Resource"},
		audit.EntityCertificate:  {System: ObjectRoleSystem, Code: "13", Display: "Security Resource"},
		audit.EntityDestination:  {System: ObjectRoleSystem, Code: "13", Display: "Security Resource"},
	}
)

// AuditPage is one page of a search of the audit trail.
type AuditPage struct {
	// Records are the page's records, in seq order.
	Records []audit.Record
	// Self is the URL of the page's search (path and query).
	Self string
	// Next is the URL of the next page, empty on the last page.
	Next string
	// At is when the search was answered (the Bundle's timestamp).
	At time.Time
}

// AuditSearchset returns p as a FHIR R4 searchset Bundle of AuditEvent
// resources (Searchset). It has no total: counting every match of a
// search would cost a scan of the chain on every page.
func AuditSearchset(p AuditPage) ([]byte, error) {
	matches := make([]fhir.Match, 0, len(p.Records))
	for _, r := range p.Records {
		ev := auditEventOf(r)
		matches = append(matches, fhir.Match{ID: ev.ID, Resource: ev})
	}
	return fhir.Searchset(matches, p.Self, p.Next, p.At)
}

// AuditEvent returns r as a FHIR R4 AuditEvent resource (JSON). It carries
// r's ids, codes, time and address, and nothing else: the trail holds no
// content.
func AuditEvent(r audit.Record) ([]byte, error) { return json.Marshal(auditEventOf(r)) }

// auditEventOf maps r to its AuditEvent (the table is in the package
// doc).
func auditEventOf(r audit.Record) auditEvent {
	m, ok := auditMappings[r.Action]
	if !ok { // a record read from the store is valid, so its action is known
		m = auditMapping{typ: dcmAppActive, action: "E"}
	}
	ev := auditEvent{
		ResourceType: "AuditEvent",
		ID:           AuditEventID(r.Workspace, r.Seq),
		Extension: []auditExtension{
			{URL: AuditActionExtension, ValueCode: string(r.Action)},
			{URL: AuditSeqExtension, ValuePositiveInt: r.Seq},
		},
		Type:     m.typ,
		Action:   m.action,
		Recorded: fhir.Instant(r.At),
		Outcome:  auditOutcomes[r.Outcome],
		Source: auditSource{
			Site:     workspaceSite(r.Workspace),
			Observer: auditObserver{Identifier: fhir.Identifier{System: ObserverSystem, Value: ObserverBackend}, Display: "Health Data Connect backend"},
			Type:     []fhir.Coding{{System: SecuritySourceTypeSystem, Code: "4", Display: "Application Server"}},
		},
	}
	if m.subtype != nil {
		ev.Subtype = []fhir.Coding{*m.subtype}
	}
	if r.Count > 0 {
		ev.Extension = append(ev.Extension, auditExtension{URL: AuditCountExtension, ValuePositiveInt: r.Count})
		ev.OutcomeDesc = fmt.Sprintf("refused %d times from this source in one window, after the refusal recorded before", r.Count)
	}
	ev.Agent = []auditAgent{agentOf(r)}
	ev.Entity = entitiesOf(r)
	return ev
}

// entitiesOf returns the entities of r: what it concerns (with what a
// rotation's new key gave up), the keys a rotation replaced, the kid of an
// encrypted request, the request's id, and what a prune removed.
func entitiesOf(r audit.Record) []auditEntity {
	var es []auditEntity
	if r.Entity != (audit.Entity{}) {
		e := auditEntity{
			What: &auditWho{Identifier: fhir.Identifier{System: entitySystems[r.Entity.Kind], Value: r.Entity.ID}},
			Type: &fhir.Coding{System: AuditEntityTypeSystem, Code: "2", Display: "System Object"},
			Role: ptr(entityRoles[r.Entity.Kind]),
		}
		for _, lost := range r.Weakened {
			e.Detail = append(e.Detail, auditDetail{Type: "weakened", ValueString: lost})
		}
		if r.Reason != "" {
			e.Detail = append(e.Detail, auditDetail{Type: "reason", ValueString: r.Reason})
		}
		e.Detail = append(e.Detail, changeDetails(r.Changes)...)
		es = append(es, e)
	}
	for _, kid := range r.Replaced {
		es = append(es, auditEntity{
			What:        &auditWho{Identifier: fhir.Identifier{System: KidSystem, Value: kid}},
			Type:        &fhir.Coding{System: AuditEntityTypeSystem, Code: "2", Display: "System Object"},
			Role:        &fhir.Coding{System: ObjectRoleSystem, Code: "13", Display: "Security Resource"},
			Description: "a key the rotation moved to retiring",
		})
	}
	if r.Kid != "" && r.Entity.Kind != audit.EntityKey {
		es = append(es, auditEntity{
			What:        &auditWho{Identifier: fhir.Identifier{System: KidSystem, Value: r.Kid}},
			Type:        &fhir.Coding{System: AuditEntityTypeSystem, Code: "2", Display: "System Object"},
			Role:        &fhir.Coding{System: ObjectRoleSystem, Code: "13", Display: "Security Resource"},
			Description: "the shared key the request was encrypted with",
		})
	}
	if r.Request != "" {
		es = append(es, auditEntity{
			What:        &auditWho{Identifier: fhir.Identifier{System: RequestSystem, Value: r.Request}},
			Type:        &fhir.Coding{System: AuditEntityTypeSystem, Code: "4", Display: "Other"},
			Description: "the request's id, in the edge's and the backend's logs",
		})
	}
	if r.Action == audit.RetentionPrune {
		es = append(es, auditEntity{
			Type:        &fhir.Coding{System: AuditEntityTypeSystem, Code: "4", Display: "Other"},
			Description: "records " + strconv.FormatInt(r.Pruned.From, 10) + " to " + strconv.FormatInt(r.Pruned.Last.Seq, 10) + " removed by retention",
			Detail: []auditDetail{
				{Type: "last-removed-hash", ValueString: r.Pruned.Last.Hash.String()},
			},
		})
	}
	return es
}

// changeDetails returns the details of changes: "before:<field>" and
// "after:<field>" with the field's values, each left out when the field
// was not set (FHIR has no empty values).
func changeDetails(changes []audit.Change) []auditDetail {
	var ds []auditDetail
	for _, c := range changes {
		if c.Before != "" {
			ds = append(ds, auditDetail{Type: "before:" + c.Field, ValueString: c.Before})
		}
		if c.After != "" {
			ds = append(ds, auditDetail{Type: "after:" + c.Field, ValueString: c.After})
		}
	}
	return ds
}

// agentOf returns the agent of r: the client, the person, or the
// operator or the backend's own job when neither acted.
func agentOf(r audit.Record) auditAgent {
	a := auditAgent{Requestor: true}
	switch {
	case r.Person != (audit.Person{}):
		a = personAgent(r.Person)
	case r.Client != "":
		a.Who = &auditWho{Identifier: fhir.Identifier{System: ClientSystem, Value: r.Client}}
	case r.Action == audit.ResourcesSubmit:
		a.Who = &auditWho{Display: "a parser (the backend's internal resources endpoint)"}
	case r.Action == audit.LoginFailed:
		a.Who = &auditWho{Display: "an unknown client"}
	case r.Action == audit.RetentionPrune || r.Action == audit.DeliveryDisabled:
		a.Requestor = false
		a.Who = &auditWho{Identifier: fhir.Identifier{System: ObserverSystem, Value: ObserverBackend}, Display: "Health Data Connect backend"}
	default:
		a.Who = &auditWho{Display: "the operator (hdc CLI)"}
	}
	if r.Grant != "" {
		a.Policy = []string{fhir.URN(r.Grant)}
	}
	if r.Source.IsValid() {
		a.Network = &auditNetwork{Address: r.Source.String(), Type: "2"}
	}
	return a
}

// personAgent returns p as an agent: a human user with the role of the
// certificate, whose serial is the alternative identity, or marked as
// direct.
func personAgent(p audit.Person) auditAgent {
	a := auditAgent{
		Type:      &codeableConcept{Coding: []fhir.Coding{{System: ExtraSecurityRoleSystem, Code: "humanuser", Display: "human user"}}},
		Role:      []codeableConcept{{Coding: []fhir.Coding{{System: AdminRoleSystem, Code: string(p.Role), Display: string(p.Role)}}}},
		Who:       &auditWho{Identifier: fhir.Identifier{System: PersonSystem, Value: p.Name}, Display: p.Name},
		AltID:     p.Serial,
		Name:      p.Name,
		Requestor: true,
	}
	if p.Direct {
		a.Extension = []auditExtension{{URL: DirectExtension, ValueBoolean: true}}
	}
	return a
}

// workspaceSite names the trail's workspace as the source's site, or the
// installation for its own trail.
func workspaceSite(ws string) string {
	if ws == "" {
		return "installation"
	}
	return "workspace " + ws
}

func ptr[T any](v T) *T { return &v }

type auditEvent struct {
	ResourceType string           `json:"resourceType"`
	ID           string           `json:"id"`
	Extension    []auditExtension `json:"extension"`
	Type         fhir.Coding      `json:"type"`
	Subtype      []fhir.Coding    `json:"subtype,omitempty"`
	Action       string           `json:"action"`
	Recorded     string           `json:"recorded"`
	Outcome      string           `json:"outcome"`
	OutcomeDesc  string           `json:"outcomeDesc,omitempty"`
	Agent        []auditAgent     `json:"agent"`
	Source       auditSource      `json:"source"`
	Entity       []auditEntity    `json:"entity,omitempty"`
}

type auditExtension struct {
	URL              string `json:"url"`
	ValueCode        string `json:"valueCode,omitempty"`
	ValuePositiveInt int64  `json:"valuePositiveInt,omitempty"`
	ValueBoolean     bool   `json:"valueBoolean,omitempty"`
}

type codeableConcept struct {
	Coding []fhir.Coding `json:"coding"`
}

type auditWho struct {
	Identifier fhir.Identifier `json:"identifier,omitzero"`
	Display    string          `json:"display,omitempty"`
}

type auditAgent struct {
	Extension []auditExtension  `json:"extension,omitempty"`
	Type      *codeableConcept  `json:"type,omitempty"`
	Role      []codeableConcept `json:"role,omitempty"`
	Who       *auditWho         `json:"who,omitempty"`
	AltID     string            `json:"altId,omitempty"`
	Name      string            `json:"name,omitempty"`
	Requestor bool              `json:"requestor"`
	Policy    []string          `json:"policy,omitempty"`
	Network   *auditNetwork     `json:"network,omitempty"`
}

type auditNetwork struct {
	Address string `json:"address"`
	Type    string `json:"type"`
}

type auditSource struct {
	Site     string        `json:"site"`
	Observer auditObserver `json:"observer"`
	Type     []fhir.Coding `json:"type"`
}

type auditObserver struct {
	Identifier fhir.Identifier `json:"identifier"`
	Display    string          `json:"display"`
}

type auditEntity struct {
	What        *auditWho     `json:"what,omitempty"`
	Type        *fhir.Coding  `json:"type,omitempty"`
	Role        *fhir.Coding  `json:"role,omitempty"`
	Description string        `json:"description,omitempty"`
	Detail      []auditDetail `json:"detail,omitempty"`
}

type auditDetail struct {
	Type        string `json:"type"`
	ValueString string `json:"valueString"`
}
