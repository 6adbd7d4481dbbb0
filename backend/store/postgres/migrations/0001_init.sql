-- Schema version 1: the tables of SQLite's version 1 in PostgreSQL's types.
-- Times are timestamptz (microsecond precision, like the store); NULL means
-- "not yet" (revoked_at, used_at, last_delivery_at). Hashes and key seeds
-- are bytea.

CREATE TABLE workspaces (
    id         text        PRIMARY KEY,
    created_at timestamptz NOT NULL
);

CREATE TABLE clients (
    id           text        PRIMARY KEY,
    workspace_id text        NOT NULL REFERENCES workspaces (id),
    secret_hash  text        NOT NULL,
    status       text        NOT NULL CHECK (status IN ('active', 'disabled')),
    created_at   timestamptz NOT NULL
);
CREATE INDEX clients_workspace ON clients (workspace_id);

CREATE TABLE sharing_grants (
    id           text        PRIMARY KEY,
    workspace_id text        NOT NULL REFERENCES workspaces (id),
    client_id    text        NOT NULL REFERENCES clients (id),
    key_hash     bytea       NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL,
    revoked_at   timestamptz
);

-- One login is one family; every rotation adds a token to it.
CREATE TABLE refresh_families (
    id           text        PRIMARY KEY,
    client_id    text        NOT NULL REFERENCES clients (id),
    workspace_id text        NOT NULL REFERENCES workspaces (id),
    grant_id     text        REFERENCES sharing_grants (id),
    created_at   timestamptz NOT NULL,
    revoked_at   timestamptz
);

CREATE TABLE refresh_tokens (
    hash       bytea       PRIMARY KEY,
    family_id  text        NOT NULL REFERENCES refresh_families (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);

-- The unique generation is the rotation guard: two replicas rotating at once
-- both try generation n+1 and only one insert succeeds.
CREATE TABLE signing_keys (
    id         text        PRIMARY KEY,
    generation bigint      NOT NULL UNIQUE,
    seed       bytea       NOT NULL,
    created_at timestamptz NOT NULL
);

CREATE TABLE records (
    id              text        PRIMARY KEY,
    care_context_id text        NOT NULL UNIQUE,
    workspace_id    text        NOT NULL REFERENCES workspaces (id),
    client_id       text        NOT NULL REFERENCES clients (id),
    blob_key        text        NOT NULL,
    sha1            bytea       NOT NULL,
    size            bigint      NOT NULL,
    content_type    text        NOT NULL,
    title           text        NOT NULL,
    tasks           text[]      NOT NULL,
    status          text        NOT NULL CHECK (status IN ('pending', 'parsed')),
    version         bigint      NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE INDEX records_workspace ON records (workspace_id);

-- body is the resource's JSON as stored by the backend, byte for byte (bytea:
-- jsonb would reorder its members, text would refuse bytes that are not
-- UTF-8).
CREATE TABLE record_resources (
    record_id     text   NOT NULL REFERENCES records (id) ON DELETE CASCADE,
    seq           bigint NOT NULL,
    resource_type text   NOT NULL,
    resource_id   text   NOT NULL,
    body          bytea  NOT NULL,
    PRIMARY KEY (record_id, seq)
);

CREATE TABLE subscriptions (
    id                    text        PRIMARY KEY,
    workspace_id          text        NOT NULL REFERENCES workspaces (id),
    endpoint              text        NOT NULL,
    protocol              text        NOT NULL CHECK (protocol IN ('http', 'https', 'sqs', 'lambda')),
    signing_key           text,
    status                text        NOT NULL CHECK (status IN ('active', 'disabled')),
    created_at            timestamptz NOT NULL,
    last_delivery_at      timestamptz,
    last_delivery_outcome text,
    UNIQUE (workspace_id, endpoint)
);

-- One row per selected event name, so fan-out is a join on event_name.
CREATE TABLE subscription_events (
    subscription_id text NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    event_name      text NOT NULL,
    PRIMARY KEY (subscription_id, event_name)
);
CREATE INDEX subscription_events_name ON subscription_events (event_name);
