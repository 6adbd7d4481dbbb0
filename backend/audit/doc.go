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
// # Elsewhere in the tree
//
// The packages below this one own the rest of the trail: window coalesces
// repeated refusals before they reach it, checkpoint writes the chains'
// heads outside the database, retention removes the expired records,
// fhirview maps a record to a FHIR R4 AuditEvent, search serves the
// AuditEvent search, and audittest holds sample records for tests.
package audit
