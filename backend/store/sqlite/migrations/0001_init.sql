-- Schema version 1 of the SQLite store (the PostgreSQL store keeps its own,
-- numbered alike). Times are BIGINT microseconds since the Unix epoch,
-- UTC; NULL means "not yet" (revoked_at, used_at, last_delivery_at). Hashes
-- and key seeds are lowercase hex.

CREATE TABLE workspaces (
    id         TEXT   PRIMARY KEY,
    created_at BIGINT NOT NULL
);

CREATE TABLE clients (
    id           TEXT   PRIMARY KEY,
    workspace_id TEXT   NOT NULL REFERENCES workspaces (id),
    secret_hash  TEXT   NOT NULL,
    status       TEXT   NOT NULL CHECK (status IN ('active', 'disabled')),
    created_at   BIGINT NOT NULL
);
CREATE INDEX clients_workspace ON clients (workspace_id);

CREATE TABLE sharing_grants (
    id           TEXT   PRIMARY KEY,
    workspace_id TEXT   NOT NULL REFERENCES workspaces (id),
    client_id    TEXT   NOT NULL REFERENCES clients (id),
    key_hash     TEXT   NOT NULL UNIQUE,
    created_at   BIGINT NOT NULL,
    revoked_at   BIGINT
);

-- One login is one family; every rotation adds a token to it.
CREATE TABLE refresh_families (
    id           TEXT   PRIMARY KEY,
    client_id    TEXT   NOT NULL REFERENCES clients (id),
    workspace_id TEXT   NOT NULL REFERENCES workspaces (id),
    grant_id     TEXT   REFERENCES sharing_grants (id),
    created_at   BIGINT NOT NULL,
    revoked_at   BIGINT
);

CREATE TABLE refresh_tokens (
    hash       TEXT   PRIMARY KEY,
    family_id  TEXT   NOT NULL REFERENCES refresh_families (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);

-- The unique generation is the rotation guard: two replicas rotating at once
-- both try generation n+1 and only one insert succeeds.
CREATE TABLE signing_keys (
    id         TEXT   PRIMARY KEY,
    generation BIGINT NOT NULL UNIQUE,
    seed       TEXT   NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE records (
    id              TEXT   PRIMARY KEY,
    care_context_id TEXT   NOT NULL UNIQUE,
    workspace_id    TEXT   NOT NULL REFERENCES workspaces (id),
    client_id       TEXT   NOT NULL REFERENCES clients (id),
    blob_key        TEXT   NOT NULL,
    sha1            TEXT   NOT NULL,
    size            BIGINT NOT NULL,
    content_type    TEXT   NOT NULL,
    title           TEXT   NOT NULL,
    tasks           TEXT   NOT NULL, -- space-separated task names
    status          TEXT   NOT NULL CHECK (status IN ('pending', 'parsed')),
    version         BIGINT NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX records_workspace ON records (workspace_id);

CREATE TABLE record_resources (
    record_id     TEXT   NOT NULL REFERENCES records (id) ON DELETE CASCADE,
    seq           BIGINT NOT NULL,
    resource_type TEXT   NOT NULL,
    resource_id   TEXT   NOT NULL,
    body          TEXT   NOT NULL,
    PRIMARY KEY (record_id, seq)
);

-- The webhook outbox (events, and per-subscription deliveries written in the
-- same transaction) will reference subscriptions (id) ON DELETE CASCADE and
-- update status, last_delivery_at and last_delivery_outcome.
CREATE TABLE subscriptions (
    id                    TEXT   PRIMARY KEY,
    workspace_id          TEXT   NOT NULL REFERENCES workspaces (id),
    endpoint              TEXT   NOT NULL,
    protocol              TEXT   NOT NULL CHECK (protocol IN ('http', 'https', 'sqs', 'lambda')),
    signing_key           TEXT,
    status                TEXT   NOT NULL CHECK (status IN ('active', 'disabled')),
    created_at            BIGINT NOT NULL,
    last_delivery_at      BIGINT,
    last_delivery_outcome TEXT,
    UNIQUE (workspace_id, endpoint)
);

-- One row per selected event name, so fan-out is a join on event_name.
CREATE TABLE subscription_events (
    subscription_id TEXT NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    event_name      TEXT NOT NULL,
    PRIMARY KEY (subscription_id, event_name)
);
CREATE INDEX subscription_events_name ON subscription_events (event_name);
