-- Schema version 11: the W3C traceparent of the request that published a
-- webhook event, which each delivery attempt's span links to; '' when the
-- request was not traced. As in PostgreSQL's version 11.
ALTER TABLE webhook_events ADD COLUMN trace_parent TEXT NOT NULL DEFAULT '';
