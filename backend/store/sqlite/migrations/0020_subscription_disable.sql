-- Schema version 20: a subscription disables itself when all its
-- deliveries have failed for a period. failing_since is the start of the
-- first failed attempt since the last success, in microseconds (NULL
-- while the last attempt succeeded); disabled_reason says why a disabled
-- subscription is ('gone': it answered 410, 'failing': it failed for the
-- period, 'client': its client disabled it).
ALTER TABLE subscriptions ADD COLUMN failing_since INTEGER;
ALTER TABLE subscriptions ADD COLUMN disabled_reason TEXT NOT NULL DEFAULT ''
    CHECK (disabled_reason IN ('', 'gone', 'failing', 'client'));
UPDATE subscriptions SET disabled_reason = 'gone' WHERE status = 'disabled';
-- The attempts' retention deletes by start.
CREATE INDEX webhook_attempts_started ON webhook_attempts (started_at);
