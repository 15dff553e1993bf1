"""RegisterCodebaseWorkflow: a repository becomes a codebase, by path, by clone, or both."""

from __future__ import annotations

import hashlib
from dataclasses import replace

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutType
from temporalio.exceptions import TimeoutError as TemporalTimeout

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.codebase import RegisteredCodebase, RepositorySource
    from isolator.contracts.errors import NO_WORKER, USER_ERRORS
    from isolator.repositories import normalize_repository_url
    from workflows.steps.codebases import registration as codebases

# A user's mistake (a folder that is no repository, a URL that cannot be cloned) completes the
# registration with the reason, in one log line; before, the workflow failed (FAILED in the UI).
MISTAKES_ARE_OUTCOMES = "registration-mistakes-are-outcomes"
# A host no worker polls is refused within seconds; before, after the 30 s pickup timeout of its git work.
ASKS_FOR_HOST_WORKER = "registration-asks-for-host-worker"


def register_workflow_id(source: RepositorySource) -> str:
    """One registration at a time per repository: concurrent requests join the running one."""
    key = normalize_repository_url(source.url) if source.url else f"{source.host}:{source.path}"
    return "codebase:" + hashlib.sha256(key.encode()).hexdigest()[:16]


@workflow.defn
class RegisterCodebaseWorkflow:
    @workflow.run
    async def run(self, source: RepositorySource) -> RegisteredCodebase:
        try:
            return await self._register(source)
        except ApplicationError as error:
            if error.type not in USER_ERRORS or not workflow.patched(MISTAKES_ARE_OUTCOMES):
                raise
            workflow.logger.info("registration of %s refused: %s", source.url or source.path, error.message)
            return RegisteredCodebase(None, created=False, problem=error.message, problem_type=error.type)

    async def _register(self, source: RepositorySource) -> RegisteredCodebase:
        existing = await codebases.find_codebase(source)
        if existing is not None:
            return RegisteredCodebase(codebase=existing, created=False)
        if workflow.patched(ASKS_FOR_HOST_WORKER) and not await codebases.host_has_worker(source.host):
            raise _no_worker(source.host)
        try:
            if source.path:
                info = await codebases.inspect_repository(source)
            else:
                info = await codebases.clone_repository(source)
            return await codebases.record_codebase(replace(info, registered_by=workflow.info().workflow_id))
        except ActivityError as error:
            cause = error.cause
            if isinstance(cause, TemporalTimeout) and cause.type == TimeoutType.SCHEDULE_TO_START:
                raise _no_worker(source.host) from None
            if isinstance(cause, ApplicationError) and cause.non_retryable:
                # Surface the reason itself, so callers can show it to the user.
                raise ApplicationError(cause.message, type=cause.type, non_retryable=True) from None
            raise


def _no_worker(host: str) -> ApplicationError:
    return ApplicationError(
        f"No worker serves host `{host}`: start `isolator worker` there with "
        f"ISOLATOR_HOST={host}, or register the repository on the host of a running worker.",
        type=NO_WORKER, non_retryable=True,
    )
