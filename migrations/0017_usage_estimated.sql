-- A provider response without `usage` is counted from the bytes sent and received (about four per
-- token) instead of as zero; such rows say so.
ALTER TABLE llm_usage ADD COLUMN estimated BOOLEAN NOT NULL DEFAULT false;
