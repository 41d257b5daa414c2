-- Who can see an issue's project, as its webhooks say (GitHub `repository.visibility` or
-- `repository.private`; GitLab `project.visibility_level` 0/10/20). It picks the engage policy
-- (`[agent.engage_roles]` public or private). NULL: not known yet, treated as public (the
-- stricter rule). A payload that does not say keeps the stored value.
ALTER TABLE issues
    ADD COLUMN project_visibility TEXT CHECK (project_visibility IN ('public', 'internal', 'private'));
