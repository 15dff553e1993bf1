"""The Temporal UI walk: a message's workflow page links to its environment's workflow and its agent
run's, and the environment's workflow says what it is. Read back as the UI reads them: the
workflow's description (user metadata) and its current details (the metadata query)."""

from __future__ import annotations

import uuid
from pathlib import Path

from temporalio.api.sdk.v1 import WorkflowMetadata

from isolator.contracts.environment import environment_workflow_id
from tests.agent_runs import finished_run
from tests.agents import command
from tests.conftest import Stack
from workflows.cleanup import CleanupWorkflow


async def test_a_messages_page_links_to_its_environment_and_its_agent_run(
    stack: Stack, repo: Path, tmp_path: Path
) -> None:
    stack.settings.agent_command_line = command("recorder", str(tmp_path / "runs.log"), "0")
    await stack.register(repo)
    said = await stack.say("ui-links", "link everything")
    created = said["result"]
    await finished_run(stack, created["agentRunId"])

    message = stack.temporal.get_workflow_handle(said["workflowId"])
    metadata = await message.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    details = metadata.current_details
    environment = environment_workflow_id(created["environmentId"])
    assert f"[`{environment}`](/namespaces/default/workflows/environment%3A{created['environmentId']})" in details
    assert f"[`agent-run:{created['agentRunId']}`](/namespaces/default/workflows/agent-run%3A" in details
    assert await (await message.describe()).static_summary() == "test ui-links: link everything"

    described = await stack.temporal.get_workflow_handle(environment).describe()
    assert await described.static_summary() == f"worktree `{created['branch']}` of {repo.name}"
    assert f"Path: {created['workingPath']}" in (await described.static_details() or "")


async def test_every_workflow_of_a_cleanup_says_what_it_does(stack: Stack, repo: Path) -> None:
    """The Temporal UI lists workflows by id (`cleanup-…:project`); their summary says what each is."""
    await stack.register(repo)
    run_id = f"cleanup-{uuid.uuid4().hex[:8]}"

    await stack.temporal.execute_workflow(CleanupWorkflow.run, id=run_id, task_queue=stack.settings.task_queue)

    host = stack.settings.host  # each host's codebases are swept by a workflow of their own
    sweep = await stack.temporal.get_workflow_handle(f"{run_id}@{host}").describe()
    assert await sweep.static_summary() == f"cleanup of the codebases on {host}"
    child = await stack.temporal.get_workflow_handle(f"{run_id}:{repo.name}").describe()
    assert (await child.static_summary() or "").startswith(f"cleanup of {repo.name} on {host}:")
