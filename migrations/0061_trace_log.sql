-- Run trace: `log`, the agent's own notes (thorough mode's stage rationale and the Critic's
-- feedback), is an event of its own.
ALTER TABLE trace_events DROP CONSTRAINT trace_events_type_check;
ALTER TABLE trace_events ADD CONSTRAINT trace_events_type_check
    CHECK (type IN ('llm_call', 'tool_call', 'stage', 'validation_failure', 'action', 'decision',
                    'error', 'tool_start', 'progress', 'log'));
