-- Schema version 9: fresh requests. A key may require every envelope to
-- name iat and jti (an A256GCM key always does); request_ids holds each
-- jti seen under a kid until the edges would refuse the request as stale
-- anyway, so that a replay through any edge of the deployment is refused.
ALTER TABLE client_keys ADD COLUMN require_fresh boolean NOT NULL DEFAULT false;

CREATE TABLE request_ids (
    kid        text        NOT NULL,
    jti        text        NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (kid, jti)
);
CREATE INDEX request_ids_expires ON request_ids (expires_at);
