-- Schema version 9: fresh requests, as in PostgreSQL's version 9. A key
-- may require every envelope to name iat and jti (an A256GCM key always
-- does); request_ids holds each jti seen under a kid until expires_at
-- (microseconds since the Unix epoch), when the edges would refuse the
-- request as stale anyway.
ALTER TABLE client_keys ADD COLUMN require_fresh INTEGER NOT NULL DEFAULT 0;

CREATE TABLE request_ids (
    kid        TEXT   NOT NULL,
    jti        TEXT   NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (kid, jti)
) WITHOUT ROWID;
CREATE INDEX request_ids_expires ON request_ids (expires_at);
