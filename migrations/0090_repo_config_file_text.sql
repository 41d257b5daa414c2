-- `repo_configs.file_text`: the repository's configuration file as read at `commit_sha` (its path
-- is `effective.file`), at most `relay_core::repo_config::file::MAX_CONFIG_BYTES`. The read API
-- and the status page narrow it by the server's settings as they run now
-- (`relay_core::repo_config::in_effect_now`), so a changed `[agent]` cap shows at once, not when
-- the next job records the repository again (issue #45 §4). NULL: no file, a file over the bound,
-- or a record from before this migration (shown as recorded until the next job or push).
ALTER TABLE repo_configs ADD COLUMN file_text TEXT;
