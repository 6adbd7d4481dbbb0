-- Schema version 3: login throttling state, shared by the replicas. One row
-- per key (a client id or a source address): tat is when its token bucket
-- will be full again (the generic cell rate algorithm). A row whose tat has
-- passed says nothing more than a missing row, and is pruned.
CREATE TABLE throttle (
    key text        PRIMARY KEY,
    tat timestamptz NOT NULL
);
CREATE INDEX throttle_tat ON throttle (tat);
