-- Schema version 18: the delivery log a client reads (a subscription's
-- deliveries, newest first, a page at a time) and the first KiB of each
-- attempt's answer body. As in PostgreSQL's version 18.
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (subscription_id, created_at, id);
ALTER TABLE webhook_attempts ADD COLUMN response_body TEXT NOT NULL DEFAULT '';
