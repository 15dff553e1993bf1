"""Ready to work: the set-up and teardown an EnvironmentWorkflow runs in its worktree.

The environment's workflow is the single owner of its worktree, so set-up runs there, one step at a
time and each a named activity on the codebase's host queue: read the repository's committed
`.isolator.toml`, take a block of ports, run the commands. Teardown runs there before any removal.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.environment import EnvironmentState
    from isolator.contracts.message import ReplyInput
    from isolator.contracts.setup import (
        CommandsRequest,
        ReadSetupInput,
        SetupStateInput,
    )
    from workflows.chat import setup_texts, texts
    from workflows.steps.chat import replies
    from workflows.steps.environments import records as environments, ports, setup

# The version from which new environments run the repository's set-up (older runs replay without it).
READY_TO_WORK = "ready-to-work"
# From this version the row says "running" while the commands run (it said only how the set-up ended).
RUNNING_RECORDED = "setup-running-recorded"
# From this version "running" is recorded beside the commands' start, not before it: a round trip less.
RUNNING_BESIDE = "setup-running-beside-commands"


async def set_up(state: EnvironmentState) -> None:
    """Read the repository's set-up, take the ports, run the commands; the state says how it went."""
    environment = state.environment
    state.setup_requested = False
    state.setup_state = "running"
    # The first set-up starts from what the creation read; a later one (`/worktree setup`) reads again.
    first = state.setup_runs == 0 and state.setup is not None
    repository_setup = state.setup if first else await setup.read_repository_setup(ReadSetupInput(environment.codebase))
    assert repository_setup is not None
    state.setup = repository_setup
    if repository_setup.config.ports and state.ports is None:
        state.ports = await ports.allocate_ports(environment, repository_setup.config.ports,
                                                 repository_setup.warm_ports)
    tail: list[str] = []
    if repository_setup.problem is not None:
        state.setup_state = "skipped"  # the creation reply said what is wrong with the file
    elif repository_setup.already_run:
        state.setup_state = "ready"  # in the warm worktree it claimed, before the claim (docs/warm.md)
    elif environment.from_fork and not repository_setup.config.trust_forks:
        state.setup_state = "skipped"
        if repository_setup.config.setup_commands:
            await tell(state, texts.setup_skipped_for_fork(environment.branch), f"fork:{state.setup_runs}")
    elif repository_setup.nothing_to_run():
        state.setup_state = "ready"  # no step taken: nothing would run in it
    else:
        key = f"{workflow.info().workflow_id}:setup:{state.setup_runs}"
        commands = CommandsRequest(environment, repository_setup, state.ports, tell=list(state.attached), key=key)
        running = SetupStateInput(environment.environment_id, "running")  # a message meanwhile reads it, and waits
        if workflow.patched(RUNNING_BESIDE):
            _, report = await asyncio.gather(environments.record_setup_state(running), setup.run_commands(commands))
        else:
            if workflow.patched(RUNNING_RECORDED):
                await environments.record_setup_state(running)
            report = await setup.run_commands(commands)
        state.setup_state = "ready" if report.outcome == "done" else "failed"
        tail = report.tail if report.outcome == "done" else []
    state.setup_runs += 1
    await environments.record_setup_state(SetupStateInput(environment.environment_id, state.setup_state,
                                                          setup_texts.setup_note(repository_setup, tail)))


def outcome_again(state: EnvironmentState) -> str:
    """`/worktree setup`'s answer: the set-up's state, or that there was nothing to run because the
    default branch has no `.isolator.toml`, or one without `[setup] commands`."""
    repository_setup = state.setup
    if state.setup_state != "ready" or repository_setup is None or repository_setup.config.setup_commands:
        return state.setup_state
    return setup_texts.NO_SETUP_COMMANDS if repository_setup.found else setup_texts.NO_SETUP_FILE


async def tear_down(state: EnvironmentState, requested_by: str | None, key: str) -> None:
    """The repository's teardown, before a removal; a failure is told to whoever asked, and removal goes on."""
    repository_setup = state.setup
    if repository_setup is None or not repository_setup.config.teardown_commands or state.setup_state == "skipped":
        return
    try:
        await setup.run_commands(CommandsRequest(state.environment, repository_setup, state.ports,
                                                 tell=[requested_by] if requested_by else [], key=key, teardown=True))
    except ActivityError as error:  # its worker died while it ran: reported, and the removal goes on
        workflow.logger.warning("teardown of %s did not finish: %s", state.environment.branch, error.cause)


async def tell(state: EnvironmentState, text: str, key: str) -> None:
    for conversation in state.attached:
        platform, conversation_id = conversation.split(":", 1)
        await replies.send_reply(ReplyInput(platform, conversation_id, text,
                                            f"{workflow.info().workflow_id}:{key}:{conversation}"))
