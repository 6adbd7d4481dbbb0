-- Schema version 19: a subscription's previous signing key, sealed like
-- the current one, and until when deliveries are signed with it as well
-- (the grace of a key rotation).
ALTER TABLE subscriptions ADD COLUMN previous_signing_key text;
ALTER TABLE subscriptions ADD COLUMN previous_key_expires_at timestamptz;
