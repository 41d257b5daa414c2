-- Run trace (seed 002): a tool call's start (`tool_start`, with the id its `tool_call` end event
-- repeats) and a long step's progress (`progress`, done/total) are events of their own.
ALTER TABLE trace_events DROP CONSTRAINT trace_events_type_check;
ALTER TABLE trace_events ADD CONSTRAINT trace_events_type_check
    CHECK (type IN ('llm_call', 'tool_call', 'stage', 'validation_failure', 'action', 'decision',
                    'error', 'tool_start', 'progress'));
