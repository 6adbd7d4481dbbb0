// Package audit is the audit trail's record: what happened (an Event), and
// how records are chained per workspace so that a record altered, removed
// or moved in the database is detected (Record, Verify).
//
// # What an event holds
//
// An Event says when, which Action, its Outcome, which client acted in
// which workspace, under which sharing grant, on which Entity (a care
// context, a subscription, a client, a grant, a key), from which source
// address, with which key id, and in which request. It holds nothing else:
// every field is typed or an identifier whose syntax Validate checks (ids
// as internal/contract has them, care context, subscription, client, grant
// and request ids as UUIDs), so that no content, secret, token or key can
// ride in it, and Validate never echoes a value it refuses. An id a client
// supplied that fails its syntax is left out of the event, not recorded.
//
// An event belongs to the trail of the workspace where it happened: a
// client acting in another workspace through a sharing grant is recorded in
// the trail of the workspace it read, which sees it. Events that no
// workspace owns (a failed login naming no known client) go to the
// installation's trail, whose workspace id is empty.
//
// # The chain
//
// Each workspace's records form one chain: record n holds n as its Seq and
// the SHA-256 of record n−1's canonical form as its Prev (record 1 holds
// the zero hash). The canonical form (Record.Canonical) is the record as
// JSON with a fixed member order, prev and seq included: it is what the
// store keeps and what is hashed, byte for byte, and Parse reads it back
// only when it is canonical. A Head is where a chain stands: its last
// record, and the last record retention removed.
//
// Retention removes a whole prefix of a chain and appends a
// RetentionPrune record naming what it removed (Pruned): the first record
// left follows the last one removed, whose seq and hash the head keeps.
// Verify checks a chain against its head and names the first break (a
// *Break): a record altered, removed (a gap in the seqs, or a prev that is
// not its predecessor's hash), repeated or out of order, a record beyond
// the head, records missing at the end, or a prefix removed without a
// prune record saying so.
//
// The chain detects changes made to the database behind the backend's
// back by anyone who cannot also rewrite every record after the change and
// the head; an attacker who can is detected only by comparing the head
// with a copy kept elsewhere.
//
// # As FHIR R4 AuditEvent
//
// The FHIR route and the operator's export map a record to an AuditEvent.
// Its type and subtype come from DICOM's audit event types (system
// http://dicom.nema.org/resources/ontology/DCM), FHIR's "rest" type
// (http://terminology.hl7.org/CodeSystem/audit-event-type) and the
// restful-interaction codes (http://hl7.org/fhir/restful-interaction); its
// action is FHIR's C, R, U, D or E:
//
//	Action                  type                             subtype                                      action
//	login, login_failed     DCM 110114 User Authentication   DCM 110122 Login                             E
//	refresh                 DCM 110114 User Authentication   DCM 110122 Login                             E
//	refresh_reuse           DCM 110113 Security Alert        DCM 110122 Login                             E
//	record_upload           DCM 110110 Patient Record        create                                       C
//	record_retrieve         DCM 110110 Patient Record        read                                         R
//	resources_submit        DCM 110110 Patient Record        update                                       U
//	subscription_create     rest                             create                                       C
//	subscription_delete     rest                             delete                                       D
//	delivery_disabled       DCM 110100 Application Activity  (none)                                       U
//	client_create           DCM 110113 Security Alert        DCM 110137 User Security Attributes Changed  C
//	client_disable          DCM 110113 Security Alert        DCM 110137 User Security Attributes Changed  U
//	sharing_grant           DCM 110113 Security Alert        DCM 110136 Security Roles Changed            C
//	sharing_revoke          DCM 110113 Security Alert        DCM 110136 Security Roles Changed            U
//	key_add                 DCM 110113 Security Alert        DCM 110137 User Security Attributes Changed  C
//	key_rotate, key_retire  DCM 110113 Security Alert        DCM 110137 User Security Attributes Changed  U
//	retention_prune         DCM 110101 Audit Log Used        (none)                                       D
//
// The other elements:
//
//   - outcome: Success is "0", Denied "4" (minor failure: refused), Failed
//     "8" (serious failure: the server failed);
//   - recorded: At;
//   - agent: the client (who: an identifier with the client id; requestor
//     true; policy: urn:uuid:<grant id> for a sharing login; network: the
//     source address, type "2", IP address), or the operator for the CLI's
//     actions;
//   - source: the backend (type "4", application server, of
//     http://terminology.hl7.org/CodeSystem/security-source-type);
//   - entity: the Entity (what: an identifier with the care context,
//     subscription, client or grant id, or the kid), and the kid and the
//     request id of the request as identifiers of their own;
//   - id: derived from the workspace and the seq, so that exports are
//     stable.
package audit
