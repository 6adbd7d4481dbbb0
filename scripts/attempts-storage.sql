-- The storage cost of webhook attempts on PostgreSQL (docs/webhooks.md):
-- 100,000 attempts of 10,000 deliveries (10 each) in a scratch schema with
-- the table and indexes of migrations 2 and 20, then their total size
-- (heap, TOAST, indexes), per attempt and per million. With answer
-- excerpts, :excerpt bytes each (0: none).
--   psql "$HDC_TEST_POSTGRES_URL" -v excerpt=0 -f scripts/attempts-storage.sql
\set ON_ERROR_STOP on
DROP SCHEMA IF EXISTS attempts_storage CASCADE;
CREATE SCHEMA attempts_storage;
SET search_path = attempts_storage;
CREATE TABLE webhook_attempts (
    delivery_id text        NOT NULL,
    number      bigint      NOT NULL,
    started_at  timestamptz NOT NULL,
    duration_us bigint      NOT NULL,
    outcome     text        NOT NULL,
    status_code bigint      NOT NULL,
    excerpt     bytea,
    PRIMARY KEY (delivery_id, number)
);
CREATE INDEX webhook_attempts_started ON webhook_attempts (started_at);
INSERT INTO webhook_attempts
SELECT md5(i::text), n, now() - (i || ' s')::interval, 150000 + i % 1000,
       CASE WHEN n = 10 THEN 'delivered' ELSE 'http_503' END, CASE WHEN n = 10 THEN 204 ELSE 503 END,
       CASE WHEN :excerpt > 0 THEN decode(repeat(md5(i::text), (:excerpt + 31) / 32), 'hex') END
FROM generate_series(1, 10000) AS d(i), generate_series(1, 10) AS a(n);
VACUUM ANALYZE webhook_attempts;
SELECT count(*) AS attempts,
       pg_size_pretty(pg_total_relation_size('webhook_attempts')) AS total,
       pg_total_relation_size('webhook_attempts') / count(*) AS bytes_per_attempt,
       pg_size_pretty(pg_total_relation_size('webhook_attempts') * 1000000 / count(*)) AS per_million
FROM webhook_attempts;
SET client_min_messages = warning;
DROP SCHEMA attempts_storage CASCADE;
