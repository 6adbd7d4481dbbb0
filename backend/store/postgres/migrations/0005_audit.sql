-- Schema version 5: the audit trail (package audit), as in SQLite's version
-- 5. Each workspace has one hash chain of records; the workspace id '' is
-- the installation's own. body is a record's canonical form, byte for byte
-- (bytea, as for record_resources.body), which the chain hashes; the other
-- columns index it for searches, and the store checks them against it when
-- it reads a record. No foreign key: the trail outlives what it names.
CREATE TABLE audit_records (
    workspace_id text        NOT NULL,
    seq          bigint      NOT NULL,
    recorded_at  timestamptz NOT NULL,
    client_id    text,
    entity_id    text,
    body         bytea       NOT NULL,
    PRIMARY KEY (workspace_id, seq)
);
CREATE INDEX audit_records_time ON audit_records (workspace_id, recorded_at);
CREATE INDEX audit_records_client ON audit_records (workspace_id, client_id, seq);
CREATE INDEX audit_records_entity ON audit_records (workspace_id, entity_id, seq);

-- Where each chain stands: its last record (seq 0 and a zero hash while it
-- is empty) and the last record retention removed, which the first record
-- kept follows. An append locks its chain's row until its transaction ends
-- (the upsert of LockAuditHead), so that replicas appending to one
-- workspace at once take seqs one after the other.
CREATE TABLE audit_heads (
    workspace_id text   PRIMARY KEY,
    seq          bigint NOT NULL,
    hash         bytea  NOT NULL,
    pruned_seq   bigint NOT NULL,
    pruned_hash  bytea  NOT NULL
);
