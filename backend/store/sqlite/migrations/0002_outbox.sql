-- Schema version 2: the webhook outbox. Portable like version 1; the
-- PostgreSQL store claims with the same statement plus FOR UPDATE SKIP LOCKED
-- in the subquery.

-- An event published on the internal listener. data is the JSON object as
-- published (compacted).
CREATE TABLE webhook_events (
    id           TEXT   PRIMARY KEY,
    workspace_id TEXT   NOT NULL REFERENCES workspaces (id),
    type         TEXT   NOT NULL,
    data         TEXT   NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX webhook_events_created ON webhook_events (created_at);

-- One event on its way to one subscription, written in the event's
-- transaction. A worker claims a due delivery by setting lease_owner and
-- lease_expires_at; an expired lease can be claimed again, which is how the
-- claims of a crashed worker come back.
CREATE TABLE webhook_deliveries (
    id               TEXT   PRIMARY KEY,
    event_id         TEXT   NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    subscription_id  TEXT   NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    status           TEXT   NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'canceled')),
    attempts         BIGINT NOT NULL,
    created_at       BIGINT NOT NULL,
    next_attempt_at  BIGINT NOT NULL,
    lease_owner      TEXT,
    lease_expires_at BIGINT,
    finished_at      BIGINT,
    UNIQUE (event_id, subscription_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id, status);
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE status <> 'pending';

-- Every attempt, for operators and for the subscription's last outcome.
CREATE TABLE webhook_attempts (
    delivery_id TEXT   NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    number      BIGINT NOT NULL,
    started_at  BIGINT NOT NULL,
    duration_us BIGINT NOT NULL,
    outcome     TEXT   NOT NULL,
    status_code BIGINT NOT NULL,
    PRIMARY KEY (delivery_id, number)
);
