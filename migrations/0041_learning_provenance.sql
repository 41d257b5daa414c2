-- Learnings a team can see and forget (issue #35): where each came from (the triggering note; the
-- job is `created_by_run`, the issue `issue_id`), the guidance it was drawn under, how often and
-- when it last reached a prompt, and who forgot it when. A forgotten learning keeps its row (and
-- its dedupe hash, so the same fact proposed again stays forgotten) and never reaches a prompt.
ALTER TABLE learnings
    ADD COLUMN note_id         TEXT,
    ADD COLUMN guidance_digest TEXT,
    ADD COLUMN prompt_uses     BIGINT      NOT NULL DEFAULT 0,
    ADD COLUMN last_used_at    TIMESTAMPTZ,
    ADD COLUMN forgotten_at    TIMESTAMPTZ,
    ADD COLUMN forgotten_by    TEXT;
