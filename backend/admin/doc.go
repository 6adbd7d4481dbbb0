// Package admin is the Admin API: what an operator does to run the
// gateway, and what an auditor reads, over the backend's internal listener
// under /admin/v1/, so that neither holds the database's credentials or the
// keeper's.
//
// # Who
//
// A caller is a person, named by a client certificate of the hop's
// authority whose role is operator or auditor (contract.Role.IsPerson):
// its subject's common name is the person's name, its serial tells two
// certificates of one name apart. An operator changes and reads; an
// auditor reads the clients, keys, grants, subscriptions, the private
// webhook receivers granted to workspaces (destinations) and fleet, and
// searches, exports and verifies the audit trail, and changes nothing. Any
// other role, and any request without a certificate, is refused (403) on
// every route; so is a certificate on the deny-list (package store's
// Revocations), on every route of both listeners (DenyList). Without the
// hop's TLS there is no person to name, and the whole API is refused.
//
// # What it records
//
// Every change is one transaction with its audit record, which names the
// person (audit.Person) and the role; reads of the audit trail are
// recorded too. The services below (identity, keyadmin, audit/trail) own
// the rules and the records; Service takes the person from the context
// (audit.PersonFrom), where the handlers put the caller and hdc's direct
// mode the local user, so that the API and the command line call the same
// code.
//
// # How it answers
//
// JSON, lists a page at a time ({"items": [...], "next": cursor}, the
// cursor opaque), errors as RFC 9457 problems with the public API's codes.
// A change that must not happen twice (a client or a key made, a rotation,
// a grant) takes an Idempotency-Key: repeated with the same key and
// request, it is answered as the first time and made once
// (idempotency.go). docs/admin-openapi.yaml describes every route.
package admin
