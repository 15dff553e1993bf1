-- The OpenTelemetry trace of the message that asked for the run (docs/observability.md, "Traces"):
-- shown on the run's page and in GET /api/runs/{id}; NULL when tracing was off.
ALTER TABLE agent_runs ADD COLUMN IF NOT EXISTS trace_id text;
