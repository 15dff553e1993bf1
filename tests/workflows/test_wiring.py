"""Wiring: every activity a workflow calls is served by a worker on the queue the call is routed to.

The calls are read from the source of workflows/steps/ (the only place that calls activities), the
served activities from the lists the workers are built from. A new step whose activity nobody
registers, or one routed to the host's queue while only the shared queue serves it, fails here
instead of waiting forever in production.
"""

from __future__ import annotations

import ast
from pathlib import Path

import asyncpg
from temporalio.client import Client

from isolator.contracts.isolation import HOST_OPERATIONS
from isolator.settings import Settings
from workers.worker import agent_activities, host_activities, shared_activities

ROOT = Path(__file__).resolve().parents[2]
STEPS = ROOT / "workflows" / "steps"
CALLS = {"execute_activity", "execute_local_activity"}


def _queue_of(call: ast.Call, dict_options: dict[str, set[str]]) -> str:
    """"agents" for `task_queue=agent_queue(...)`; "host" for any other `task_queue=`, given directly
    or in a dict of options spread into the call; else "shared"."""
    for keyword in call.keywords:
        if keyword.arg == "task_queue":
            routed = keyword.value
            return "agents" if isinstance(routed, ast.Call) and getattr(routed.func, "id", "") == "agent_queue" \
                else "host"
        if keyword.arg is None and isinstance(keyword.value, ast.Name):
            if "task_queue" in dict_options.get(keyword.value.id, set()):
                return "host"
    return "shared"


def _dict_options(function: ast.AST) -> dict[str, set[str]]:
    """`name = dict(key=...)` assignments in a function: the keys each spread dict carries."""
    options: dict[str, set[str]] = {}
    for node in ast.walk(function):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == "dict"):
            options[node.targets[0].id] = {keyword.arg for keyword in node.value.keywords if keyword.arg}
    return options


def routed_calls() -> set[tuple[str, str]]:
    """(activity name, "shared", "host" or "agents") for every activity call in workflows/steps/."""
    calls: set[tuple[str, str]] = set()
    for module in sorted(STEPS.rglob("*.py")):
        tree = ast.parse(module.read_text())
        for function in [node for node in ast.walk(tree) if isinstance(node, ast.AsyncFunctionDef)]:
            options = _dict_options(function)
            for call in [node for node in ast.walk(function) if isinstance(node, ast.Call)]:
                name = getattr(call.func, "attr", None)
                if name not in CALLS:
                    continue
                activity = call.args[0]
                # A local activity runs on the workflow's own worker, which listens on the shared queue.
                queue = _queue_of(call, options) if name == "execute_activity" else "shared"
                if isinstance(activity, ast.Attribute) and ast.unparse(activity) == "operation.activity":
                    # The isolation provider's operations, called from their one list (isolator/contracts/isolation.py).
                    calls.update((operation.activity, queue) for operation in HOST_OPERATIONS)
                    continue
                assert isinstance(activity, ast.Constant), f"{module.relative_to(STEPS)}: activities are called by their name"
                calls.add((activity.value, queue))
    return calls


def served(activities: list) -> set[str]:
    return {getattr(function, "__temporal_activity_definition").name for function in activities}


def test_only_the_steps_call_activities() -> None:
    """The scan below sees every call: no workflow module outside workflows/steps/ calls an activity."""
    outside = [
        path.relative_to(ROOT) for path in (ROOT / "workflows").rglob("*.py")
        if STEPS not in path.parents and any(f".{call}(" in path.read_text() for call in CALLS)
    ]
    assert outside == []


def unserved(calls: set[tuple[str, str]], queues: dict[str, set[str]]) -> list[str]:
    return sorted(f"{activity} on the {queue} queue" for activity, queue in calls if activity not in queues[queue])


async def test_every_activity_a_workflow_calls_is_served_on_its_queue(
    temporal: Client, db: asyncpg.Pool, settings: Settings
) -> None:
    calls = routed_calls()
    assert len(calls) > 20, "the scan found the steps' calls"
    assert ("remove_worktree", "host") in calls and ("record_conversation", "shared") in calls
    queues = {"shared": served(shared_activities(temporal, db, settings)), "host": served(host_activities(db, settings)),
              "agents": served(agent_activities(db, settings))}
    assert ("run_agent", "agents") in calls
    assert unserved(calls, queues) == []
    # The check can fail: a reply routed to the host's queue, where no worker serves it.
    assert unserved({("send_reply", "host")}, queues) == ["send_reply on the host queue"]


def test_every_activity_a_worker_can_die_in_is_noticed_within_its_heartbeat_timeout() -> None:
    """Workers heartbeat every normal activity (workers/interceptors.py), but only a call that sets
    `heartbeat_timeout` lets the server notice a dead worker: without it, a SIGKILLed worker's
    activity waits out its whole start-to-close timeout (minutes) before it is tried again."""
    missing = []
    for module in sorted(STEPS.rglob("*.py")):
        tree = ast.parse(module.read_text())
        for function in [node for node in ast.walk(tree) if isinstance(node, ast.AsyncFunctionDef)]:
            options = _dict_options(function)
            for call in [node for node in ast.walk(function) if isinstance(node, ast.Call)]:
                if getattr(call.func, "attr", None) != "execute_activity":
                    continue
                given = {keyword.arg for keyword in call.keywords if keyword.arg}
                for keyword in call.keywords:
                    if keyword.arg is None and isinstance(keyword.value, ast.Name):
                        given |= options.get(keyword.value.id, set())
                if "heartbeat_timeout" not in given:
                    missing.append(f"{module.relative_to(STEPS)}:{call.lineno}")
    assert missing == []
