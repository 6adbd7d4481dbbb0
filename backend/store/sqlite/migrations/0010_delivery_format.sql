-- Schema version 10: a subscription's delivery format, as in PostgreSQL's
-- version 10.
ALTER TABLE subscriptions ADD COLUMN delivery_format TEXT NOT NULL DEFAULT 'standard-webhooks';
