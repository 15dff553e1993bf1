"""MoveCodebaseWorkflow: a codebase moves to another host, its worktrees' work with it.

In order: the codebase and its worktrees read (and marked `moving`); a clone on the new host; on the old
host, when it answers within OLD_HOST_ANSWERS_WITHIN, each worktree archived as it is (uncommitted and
untracked files too) and pushed to origin, `refs/isolator/archive/<id>`; on the new host each worktree put
back from that archive (from the one ARCHIVE_PUSH left at origin when the old host is down, else from its
branch there); the rows moved, each environment's workflow told its new place, each conversation told once;
then the old host's worktrees removed (archived there and at origin already; its checkout stays).
Started by `POST /api/codebases/{id}/move` and the codebase page's button (api/codebase_moves.py), ID
`move:<codebase id>`: a second request while one goes joins it.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.codebase import Codebase, RepositorySource
    from isolator.contracts.move import (
        ExportRequest,
        ImportRequest,
        MoveAbandoned,
        MoveFinish,
        MoveReport,
        MoveRequest,
    )
    from workflows.steps.codebases import moving
    from workflows.steps.codebases import registration as codebases


@workflow.defn
class MoveCodebaseWorkflow:
    @workflow.run
    async def run(self, request: MoveRequest) -> MoveReport:
        plan = await moving.begin_move(request)
        if plan.codebase is None or plan.problem is not None:
            return MoveReport("refused", plan.problem or "no such codebase")
        old = plan.codebase
        if not await codebases.host_has_worker(request.host):
            return await self._abandon(old, f"no worker of {request.host} answers: start `isolator worker` there "
                                            f"with ISOLATOR_HOST={request.host} first")
        try:
            info = await codebases.clone_repository(RepositorySource(host=request.host, url=old.repository_url,
                                                                     name=old.name))
        except ActivityError as error:
            cause = error.cause
            return await self._abandon(old, f"{request.host} could not clone {old.repository_url}: "
                                            f"{cause.message if isinstance(cause, ApplicationError) else cause}")
        new = Codebase(old.id, old.name, info.canonical_path, old.default_branch, request.host, old.repository_url)
        answered = False
        if plan.environments:
            try:
                exported = await moving.export_worktrees(ExportRequest(old, plan.environments))
                answered = True
                workflow.logger.info("moving %s: %d of %d worktree(s) pushed from %s", old.name,
                                     sum(item.pushed for item in exported), len(exported), old.host)
            except ActivityError as error:  # down: what ARCHIVE_PUSH and the branches left at origin is taken
                workflow.logger.warning("moving %s: %s did not answer (%s); taking origin's archives", old.name,
                                        old.host, error.cause)
        report = await moving.import_worktrees(ImportRequest(new, plan.environments))
        await moving.finish_move(MoveFinish(old, new, report, answered, workflow.info().workflow_id))
        if answered:
            try:
                await moving.release_worktrees(ExportRequest(old, plan.environments))
            except ActivityError as error:  # gone meanwhile: its stale copies stay until it is cleaned by hand
                workflow.logger.warning("moving %s: worktrees left on %s (%s)", old.name, old.host, error.cause)
        lost = sum(item.outcome == "lost" for item in report.environments)
        return MoveReport("moved", f"`{old.name}` moved from {old.host} to {request.host}: "
                                   f"{len(report.environments) - lost} worktree(s) there, {lost} lost.",
                          request.host, report.environments, answered)

    async def _abandon(self, old: Codebase, reason: str) -> MoveReport:
        """Nothing moved: the codebase stays where it is, no longer marked `moving`."""
        await moving.abandon_move(MoveAbandoned(old.id, f"a move was refused: {reason}"))
        return MoveReport("refused", reason)
