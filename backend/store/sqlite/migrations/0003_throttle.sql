-- Schema version 3: login throttling state, for a limiter shared by every
-- process on the database. One row per key (a client id or a source
-- address): tat is when its token bucket will be full again, in
-- microseconds since the Unix epoch (the generic cell rate algorithm). A
-- row whose tat has passed says nothing more than a missing row, and is
-- pruned.
CREATE TABLE throttle (
    key TEXT   PRIMARY KEY,
    tat BIGINT NOT NULL
);
CREATE INDEX throttle_tat ON throttle (tat);
