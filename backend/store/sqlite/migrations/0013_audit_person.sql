-- Schema version 13: the person an audit record names as its author
-- (audit.Event.Person: an operator's change, a read of the trail through
-- the Admin API), by name, so that a search by agent finds it as it finds
-- a client's. NULL for a client's record, the backend's own, and every
-- record written before; the record's body says the same, and a search
-- checks what it finds against it. As in PostgreSQL's version 13.
ALTER TABLE audit_records ADD COLUMN person TEXT;
CREATE INDEX audit_records_person ON audit_records (workspace_id, person, seq);
