-- Schema version 10: a subscription's delivery format: the Standard
-- Webhooks form, or the original service's (eka), for receivers written
-- for it.
ALTER TABLE subscriptions ADD COLUMN delivery_format text NOT NULL DEFAULT 'standard-webhooks';
