-- A thread's identity names its platform (`platform:conversation id`): the same conversation id on
-- two platforms is two pieces of work. Environments that exist keep their branch and their path;
-- only the identity they are found by gains the prefix.
UPDATE isolation_environments SET workflow_id = created_by_platform || ':' || workflow_id
WHERE workflow_type = 'thread' AND created_by_platform IS NOT NULL;
