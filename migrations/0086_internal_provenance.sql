-- What was drawn with a GitLab internal note in context (issue #33 §6): gaps and findings a
-- cycle opened while the planner's context held an internal note (project members only). The
-- living summary is a public comment: it leaves them out and says how many it left out.
ALTER TABLE gaps ADD COLUMN internal BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE findings ADD COLUMN internal BOOLEAN NOT NULL DEFAULT false;
