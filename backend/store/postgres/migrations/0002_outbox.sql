-- Schema version 2: the webhook outbox, as in SQLite's version 2. Workers on
-- any number of replicas claim due deliveries with FOR UPDATE SKIP LOCKED.

-- An event published on the internal listener. data is the JSON object as
-- published (compacted), byte for byte: bytea, as for record_resources.body.
CREATE TABLE webhook_events (
    id           text        PRIMARY KEY,
    workspace_id text        NOT NULL REFERENCES workspaces (id),
    type         text        NOT NULL,
    data         bytea       NOT NULL,
    created_at   timestamptz NOT NULL
);
CREATE INDEX webhook_events_created ON webhook_events (created_at);

-- One event on its way to one subscription, written in the event's
-- transaction. A worker claims a due delivery by setting lease_owner and
-- lease_expires_at; an expired lease can be claimed again, which is how the
-- claims of a crashed replica come back.
CREATE TABLE webhook_deliveries (
    id               text        PRIMARY KEY,
    event_id         text        NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    subscription_id  text        NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    status           text        NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'canceled')),
    attempts         bigint      NOT NULL,
    created_at       timestamptz NOT NULL,
    next_attempt_at  timestamptz NOT NULL,
    lease_owner      text,
    lease_expires_at timestamptz,
    finished_at      timestamptz,
    UNIQUE (event_id, subscription_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_owner ON webhook_deliveries (lease_owner) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id, status);
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE status <> 'pending';

-- Every attempt, for operators and for the subscription's last outcome.
CREATE TABLE webhook_attempts (
    delivery_id text        NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    number      bigint      NOT NULL,
    started_at  timestamptz NOT NULL,
    duration_us bigint      NOT NULL,
    outcome     text        NOT NULL,
    status_code bigint      NOT NULL,
    PRIMARY KEY (delivery_id, number)
);
