-- Schema version 15: what the Admin API keeps. The deny-list of the hop's
-- certificates, by serial (hex); and the claims of Idempotency-Keys, each
-- person's own, with the answer of the change made under it (its body
-- sealed: it may hold a secret shown once), forgotten after a day. The
-- clients are listed a page at a time in creation order. As in
-- PostgreSQL's version 15.
CREATE TABLE revoked_certificates (
    serial     TEXT    PRIMARY KEY,
    name       TEXT    NOT NULL,
    role       TEXT    NOT NULL,
    revoked_at INTEGER NOT NULL,
    revoked_by TEXT    NOT NULL
);

CREATE TABLE idempotency_keys (
    person     TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    hash       BLOB    NOT NULL,
    status     INTEGER NOT NULL,
    body       BLOB,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (person, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE INDEX clients_created ON clients (created_at, id);
CREATE INDEX clients_workspace_created ON clients (workspace_id, created_at, id);
