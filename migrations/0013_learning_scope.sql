-- A learning drawn from a cycle whose context held text that must not leave its issue (a GitLab
-- internal note) is restricted: only its own issue sees it. Learnings of confidential issues are
-- kept to their issue by the read query (a join), so an issue made confidential later is covered.
ALTER TABLE learnings ADD COLUMN restricted BOOLEAN NOT NULL DEFAULT false;
