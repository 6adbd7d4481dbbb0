-- Schema version 12: the entities an audit record names besides its own
-- (audit_records.entity_id): the kids of the keys a rotation moved to
-- retiring, so that a search by entity finds the rotation by the key it
-- replaced as by the key it made. Written with the record, in its
-- transaction, and removed with it; the record's body says the same, and
-- a search checks what it finds against it. As in SQLite's version 12.
CREATE TABLE audit_entities (
    workspace_id text   NOT NULL,
    seq          bigint NOT NULL,
    entity_id    text   NOT NULL,
    PRIMARY KEY (workspace_id, entity_id, seq)
);
