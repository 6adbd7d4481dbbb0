-- Schema version 15: what the Admin API keeps. The deny-list of the hop's
-- certificates, by serial (hex); and the claims of Idempotency-Keys, each
-- person's own, with the answer of the change made under it (its body
-- sealed: it may hold a secret shown once), forgotten after a day. The
-- clients are listed a page at a time in creation order. As in SQLite's
-- version 15.
CREATE TABLE revoked_certificates (
    serial     text        PRIMARY KEY,
    name       text        NOT NULL,
    role       text        NOT NULL,
    revoked_at timestamptz NOT NULL,
    revoked_by text        NOT NULL
);

CREATE TABLE idempotency_keys (
    person     text        NOT NULL,
    key        text        NOT NULL,
    hash       bytea       NOT NULL,
    status     integer     NOT NULL,
    body       bytea,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (person, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE INDEX clients_created ON clients (created_at, id);
CREATE INDEX clients_workspace_created ON clients (workspace_id, created_at, id);
