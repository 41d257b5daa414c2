-- The GitHub App installation that delivered the issue's webhooks (`installation.id`), so the
-- tracker client can exchange an installation token for exactly that installation when it writes
-- back. NULL for token-authenticated trackers, GitLab, and issues seen before this migration
-- (the client then looks the installation up by repository).
--
-- Nullable without a default: adding it rewrites nothing, and the column is not indexed, so the
-- intake's issue updates stay HOT.
ALTER TABLE issues ADD COLUMN installation_id bigint;
