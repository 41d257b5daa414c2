-- `jobs.last_cause`: the classified root cause of the job's last failed attempt, beside its
-- `last_error` (the whole error chain): the LLM's error kind (`llm server_error`, `llm
-- rate_limited`, …) or the tracker's (`tracker forbidden`, …); NULL when the error was not one of
-- theirs. `relay jobs list`, `/ui/ops` and the read API show it, so an operator sees why a job
-- died without reading its trace (issue #45 §3).
ALTER TABLE jobs ADD COLUMN last_cause TEXT;
