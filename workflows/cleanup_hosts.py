"""The scheduled cleanup, host by host: each host's codebases are swept by a workflow of their own, all
hosts at once, so that a host that is down delays only its own codebases.

HostCleanupWorkflow asks its host first (a step that does nothing, 3 s to be taken: workflows/steps/
codebases/host_waits.py), and again before each codebase: a silent host's sweep ends at once, reported.
Each codebase's sweep (CodebaseCleanupWorkflow) is bounded: a host that dies during one costs its own
sweep that bound at most, never the other hosts' nor the schedule's next run.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ChildWorkflowError, TimeoutError

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.cleanup import (
        CleanupKind,
        CleanupReport,
        CleanupRunReport,
        CodebaseCleanupInput,
        HostCleanupInput,
    )
    from isolator.contracts.codebase import Codebase
    from workflows.steps.codebases import host_waits

# One codebase's sweep: its survey, removals, archives and disk budget, on a live host, take minutes at most.
CODEBASE_SWEEP_BOUND = timedelta(minutes=30)


@workflow.defn
class HostCleanupWorkflow:
    @workflow.run
    async def run(self, request: HostCleanupInput) -> CleanupRunReport:
        report = CleanupRunReport()
        for codebase in request.codebases:
            if not await host_waits.host_answers(request.host):
                workflow.logger.warning("cleanup: %s does not answer; its codebases wait for the next sweep",
                                        request.host)
                report.hosts_not_answering.append(request.host)
                break
            try:
                report.codebases.append(await workflow.execute_child_workflow(  # workflows/cleanup.py's
                    "CodebaseCleanupWorkflow", CodebaseCleanupInput(codebase, request.kinds, key=request.key),
                    result_type=CleanupReport, id=f"{request.key}:{codebase.name}", execution_timeout=CODEBASE_SWEEP_BOUND,
                    static_summary=f"cleanup of {codebase.name} on {request.host}: missing, merged and stale "
                                   "worktrees, old archives, disk",
                ))
            except ChildWorkflowError as error:
                if not isinstance(error.cause, TimeoutError):
                    raise
                workflow.logger.warning("cleanup of %s on %s passed its bound (%s)", codebase.name, request.host,
                                        CODEBASE_SWEEP_BOUND)
                report.hosts_not_answering.append(request.host)
                break
        return report


async def sweep_hosts(codebases: list[Codebase], kinds: list[CleanupKind], key: str) -> CleanupRunReport:
    """Every host's sweep at once; the report of all of them, in the codebases' order."""
    hosts: dict[str, list[Codebase]] = {}
    for codebase in codebases:
        hosts.setdefault(codebase.host, []).append(codebase)
    reports = await asyncio.gather(*(workflow.execute_child_workflow(
        HostCleanupWorkflow.run, HostCleanupInput(host, held, kinds, key), id=f"{key}@{host}",
        static_summary=f"cleanup of the codebases on {host}",
    ) for host, held in hosts.items()))
    return CleanupRunReport(codebases=[codebase for report in reports for codebase in report.codebases],
                            hosts_not_answering=[host for report in reports for host in report.hosts_not_answering])
