// Package fhirview maps the audit trail's records to FHIR R4 AuditEvent
// resources, and a page of them to a searchset Bundle: the FHIR route
// (package audit/search) and the operator's export (hdc audit export)
// answer with them.
//
// # The mapping
//
// An AuditEvent's type and subtype come from DICOM's audit event types (system
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
//	subscription_enable     rest                             update                                       U
//	subscription_disable    rest                             update                                       U
//	signing_key_rotate      DCM 110113 Security Alert        DCM 110129 Security Configuration            U
//	delivery_redeliver      DCM 110100 Application Activity  (none)                                       E
//	delivery_recover        DCM 110100 Application Activity  (none)                                       E
//	subscription_test       DCM 110100 Application Activity  (none)                                       E
//	client_create           DCM 110113 Security Alert        DCM 110137 User Security Attributes Changed  C
//	client_disable          DCM 110113 Security Alert        DCM 110137 User Security Attributes Changed  U
//	sharing_grant           DCM 110113 Security Alert        DCM 110136 Security Roles Changed            C
//	sharing_revoke          DCM 110113 Security Alert        DCM 110136 Security Roles Changed            U
//	key_add                 DCM 110113 Security Alert        DCM 110137 User Security Attributes Changed  C
//	key_rotate, key_retire  DCM 110113 Security Alert        DCM 110137 User Security Attributes Changed  U
//	client_update           DCM 110113 Security Alert        DCM 110137 User Security Attributes Changed  U
//	client_limits_set, client_limits_clear
//	                        DCM 110113 Security Alert        DCM 110129 Security Configuration            U
//	webhook_destination_grant, webhook_destination_revoke
//	                        DCM 110113 Security Alert        DCM 110129 Security Configuration            C, U
//	retention_prune         DCM 110101 Audit Log Used        (none)                                       D
//	keeper_rewrap           DCM 110113 Security Alert        DCM 110129 Security Configuration            U
//	certificate_revoke      DCM 110113 Security Alert        DCM 110137 User Security Attributes Changed  U
//	audit_search            DCM 110101 Audit Log Used        search-type                                  E
//	audit_export            DCM 110101 Audit Log Used        read                                         R
//	audit_verify            DCM 110101 Audit Log Used        (none)                                       E
//
// The other elements:
//
//   - outcome: Success is "0", Denied "4" (minor failure: refused), Failed
//     "8" (serious failure: the server failed);
//   - recorded: At;
//   - agent: the client (who: an identifier with the client id; requestor
//     true; policy: urn:uuid:<grant id> for a sharing login; network: the
//     source address, type "2", IP address); or the person, for an
//     operator's change or a read of the trail (type humanuser of
//     extra-security-role-type; role: operator or auditor in AdminRoleSystem;
//     who: an identifier with the person's name; name: the same; altId:
//     the certificate's serial; an extension DirectExtension true for a
//     command that opened the database directly); or the operator (hdc
//     CLI) for a record written before persons were named;
//   - source: the backend (type "4", application server, of
//     http://terminology.hl7.org/CodeSystem/security-source-type);
//   - entity: the Entity (what: an identifier with the care context,
//     subscription, client, grant or webhook destination id, or the kid; for a rotation to a
//     weaker key, a detail "weakened" per thing it gave up, "enc" or
//     "freshness"; for a subscription the backend disabled, a detail
//     "reason", "gone" or "failing"; for an operator's change that records
//     values, a detail "before:<field>" and "after:<field>" per field it
//     moved (name, label:<key>, limits), each left out where the field
//     was not set), each key a rotation moved to retiring (what: its kid),
//     and the kid and the request id of the request as identifiers of
//     their own;
//   - id: derived from the workspace and the seq, so that exports are
//     stable.
package fhirview
