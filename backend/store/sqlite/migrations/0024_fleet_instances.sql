-- Schema version 24: an edge's instance id is one row, whatever its
-- certificate's serial (the fifth review, finding 4). A report names its
-- edge by the instance id and is taken only under the certificate's name
-- that first reported it; a report of a new instance replaces the rows of
-- that name from the same address (an edge restarted there). Of the rows
-- version 14 kept per (id, serial), the last reported stays. As in
-- PostgreSQL's version 24.
CREATE TABLE fleet_edges_24 (
    id           TEXT   PRIMARY KEY,
    cert_serial  TEXT   NOT NULL,
    cert_name    TEXT   NOT NULL,
    applied_seq  BIGINT NOT NULL,
    last_contact BIGINT NOT NULL,
    source       TEXT   NOT NULL
) WITHOUT ROWID;

INSERT INTO fleet_edges_24 (id, cert_serial, cert_name, applied_seq, last_contact, source)
SELECT id, cert_serial, cert_name, applied_seq, last_contact, source FROM fleet_edges AS e
WHERE NOT EXISTS (
    SELECT 1 FROM fleet_edges AS later
    WHERE later.id = e.id AND (later.last_contact, later.cert_serial) > (e.last_contact, e.cert_serial)
);

DROP TABLE fleet_edges;
ALTER TABLE fleet_edges_24 RENAME TO fleet_edges;
