-- Schema version 23: an attempt keeps the answer of a receiver at a
-- public address only (issue 56): one that only an allow-list or a grant
-- admits is no client's to read. The answers earlier versions kept do not
-- say which kind of address gave them, so every one is dropped; their
-- attempts keep their status, outcome and duration. As in PostgreSQL's
-- version 23.
UPDATE webhook_attempts SET response_body = '' WHERE response_body <> '';
