-- Schema version 19: a subscription's previous signing key and its
-- expiry (Unix microseconds), as in PostgreSQL's version 19.
ALTER TABLE subscriptions ADD COLUMN previous_signing_key TEXT;
ALTER TABLE subscriptions ADD COLUMN previous_key_expires_at INTEGER;
