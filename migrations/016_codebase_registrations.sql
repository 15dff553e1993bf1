-- The registration that recorded a codebase. A local activity runs again when the workflow task that
-- held its result is lost; the same registration then finds its own row and reports it as new (its
-- reply says "registered", and the codebase's warm pool is started), not as one registered before.
ALTER TABLE codebases ADD COLUMN registered_by text;
