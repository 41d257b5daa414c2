-- The trigger labels an engaging `trigger_label` event added (issue #44 §7): a repository's
-- `.relay.toml` narrows the trigger labels, and the job must ask whether the label this event
-- added is still a trigger, not whether any label the issue carries is. NULL for other events
-- and for deliveries recorded before this column (the job then falls back to the issue's labels).
ALTER TABLE deliveries ADD COLUMN trigger_labels TEXT[];
