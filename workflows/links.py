"""What the Temporal UI shows of a message's workflow: its outcome, and links to the workflows it led to
(its environment's, its agent run's), so that a reader walks from one to the other."""

from __future__ import annotations

from urllib.parse import quote

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.environment import environment_workflow_id
    from isolator.contracts.message import Resolution
    from workflows.agent_run import agent_run_workflow_id


def workflow_link(workflow_id: str) -> str:
    """A Markdown link to the workflow's page in the Temporal UI (the UI renders details as Markdown)."""
    return f"[`{workflow_id}`](/namespaces/{quote(workflow.info().namespace, safe='')}/workflows/{quote(workflow_id, safe='')})"


def message_details(resolution: Resolution) -> str:
    where = f" `{resolution.branch}` at {resolution.working_path}" if resolution.branch else ""
    lines = [f"Outcome: {resolution.outcome}{where}"]
    if resolution.environment_id:
        lines.append(f"Environment: {workflow_link(environment_workflow_id(resolution.environment_id))}")
    if resolution.run_id:
        lines.append(f"Agent run: {workflow_link(agent_run_workflow_id(resolution.run_id))}")
    return "\n\n".join(lines)
