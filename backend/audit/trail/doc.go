// Package trail is the operator's and the auditor's reading of the audit
// trail: the search across every workspace's trail (search.go), its export
// as FHIR AuditEvent NDJSON (export.go) and its verification against the
// newest checkpoint and the retention (verify.go). The Admin API (package
// admin) and hdc's direct mode call the same Service, so that `hdc audit
// list|export|verify` print the same either way.
//
// # What a search sees
//
// Trails in workspace order (the installation's, "", first), each oldest
// record first, or with Query.Newest every trail's records together,
// newest first (newest.go), a page at a time: the cursor is the last
// record a page read, and the time the search began, which bounds every
// page after the first, so that what is appended while one pages, the
// search's own records among them, does not lengthen it.
//
// # What it records
//
// A search, an export or a verification made for a person who came
// through the Admin API (audit.PersonFrom, not Direct) is itself a record
// naming that person (audit.AuditSearch, AuditExport, AuditVerify):
// in the trail it read when it read one workspace's trail and that trail
// exists, with the workspace as its entity; in the installation's trail
// otherwise. A read whose record cannot be written fails: nothing is read
// unrecorded. hdc's direct mode records none: whoever opened the database
// reads its rows with or without hdc, and the trail cannot witness that.
package trail
