"""Results, as the environment's workflow runs them: after a run that ended `done`, and on `/pr`.

Both touch the worktree (the service's commit), so they run as a step of their own: after a run
while it still counts as running, and for `/pr` only between runs, with no next run started meanwhile.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.agent import RunRequest
    from isolator.contracts.environment import EnvironmentState
    from isolator.contracts.message import ReplyInput
    from isolator.contracts.results import Delivery, PublishRequest, PullRequestAsk, PushRequest
    from isolator.results_rules import kind_of
    from workflows.steps.chat import replies
    from workflows.steps.results import delivery as results

# From this version, a run that ends `done` has its work delivered (docs/results.md).
DELIVERS_RESULTS = "results-after-done-runs"


async def deliver_after_run(state: EnvironmentState, run: RunRequest) -> Delivery:
    """A chat's runs deliver only once it has a PR: until then no step runs at all, so the next
    message never waits behind one."""
    if kind_of(state.environment) == "chat" and not state.has_pull_request:
        return Delivery("off")
    return await _deliver(PushRequest(state.environment, run.conversation, run.run_id, run.text, run.plan))


async def deliver_on_request(state: EnvironmentState, ask: PullRequestAsk) -> Delivery:
    delivered = await _deliver(PushRequest(state.environment, ask.conversation, None, ask.title, None, ask.title))
    if delivered.pull_request is not None:
        state.has_pull_request = True
    return delivered


async def _deliver(request: PushRequest) -> Delivery:
    """Push, then publish; a step that gave up is told, and the environment goes on."""
    try:
        pushed = await results.push_results(request)
        return await results.publish_results(PublishRequest(request, pushed))
    except ActivityError as error:
        cause = error.cause.message if error.cause is not None else str(error)  # type: ignore[attr-defined]
        text = f"The work was not delivered ({cause}); it stays on the server's branch `{request.environment.branch}`."
        if request.run_id is not None:
            platform, conversation_id = request.conversation.split(":", 1)
            await replies.send_reply(ReplyInput(platform, conversation_id, text, f"agent-run:{request.run_id}:undelivered"))
        return Delivery("failed", text)
