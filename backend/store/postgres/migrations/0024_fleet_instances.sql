-- Schema version 24: an edge's instance id is one row, whatever its
-- certificate's serial (the fifth review, finding 4). A report names its
-- edge by the instance id and is taken only under the certificate's name
-- that first reported it; a report of a new instance replaces the rows of
-- that name from the same address (an edge restarted there). Of the rows
-- version 14 kept per (id, serial), the last reported stays. As in
-- SQLite's version 24.
DELETE FROM fleet_edges AS e USING fleet_edges AS later
WHERE later.id = e.id AND (later.last_contact, later.cert_serial) > (e.last_contact, e.cert_serial);

ALTER TABLE fleet_edges DROP CONSTRAINT fleet_edges_pkey, ADD PRIMARY KEY (id);
