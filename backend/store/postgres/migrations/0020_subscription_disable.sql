-- Schema version 20: a subscription disables itself when all its
-- deliveries have failed for a period. failing_since is the start of the
-- first failed attempt since the last success (NULL while the last
-- attempt succeeded); disabled_reason says why a disabled subscription is
-- ('gone': it answered 410, 'failing': it failed for the period,
-- 'client': its client disabled it). As in SQLite's version 20.
ALTER TABLE subscriptions ADD COLUMN failing_since timestamptz;
ALTER TABLE subscriptions ADD COLUMN disabled_reason text NOT NULL DEFAULT ''
    CHECK (disabled_reason IN ('', 'gone', 'failing', 'client'));
UPDATE subscriptions SET disabled_reason = 'gone' WHERE status = 'disabled';
-- The attempts' retention deletes by start.
CREATE INDEX webhook_attempts_started ON webhook_attempts (started_at);
