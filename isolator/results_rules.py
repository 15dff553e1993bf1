"""Results, the pure part: which conversations deliver their work where, which branch the service may
push, who authors its commit, and what the conversation is told."""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Literal

from isolator.contracts.agent import AgentPlan
from isolator.contracts.environment import EnvironmentRef
from isolator.contracts.results import PullRequestRef

# issue: a draft PR once, then pushes; pull_request: its own branch; fork: never pushed;
# chat (threads, tasks): after `/pr`; review: a review checkout, never pushed
Kind = Literal["issue", "pull_request", "fork", "chat", "review"]
_INTERPRETER = re.compile(r"^(python[0-9.]*|node|sh|bash|ruby|perl|deno|bun|uv|npx)$")
_AGENTS = {"claude": "Claude Code", "codex": "Codex", "aider": "Aider", "gemini": "Gemini CLI"}


def kind_of(environment: EnvironmentRef) -> Kind:
    if environment.workflow_type == "pr":
        return "fork" if environment.from_fork else "pull_request"
    if environment.workflow_type in ("issue", "review"):
        return environment.workflow_type  # type: ignore[return-value]
    return "chat"


def remote_branch(environment: EnvironmentRef, recorded: PullRequestRef | None, prefix: str) -> str:
    """The branch on origin: the recorded one; a new issue branch gets `[results] branch_prefix`."""
    if recorded is not None:
        return recorded.remote_branch
    if kind_of(environment) == "issue" and prefix:
        return f"{prefix}{environment.branch}"
    return environment.branch


def push_refusal(environment: EnvironmentRef, remote: str, default_branch: str, checked_out: str | None,
                 recorded: PullRequestRef | None, prefix: str) -> str | None:
    """Why the environment may not push `remote`: never the default branch, never one it does not own."""
    branch = environment.branch
    if checked_out != branch:
        where = f"on `{checked_out}`" if checked_out else "on no branch (a detached HEAD)"
        return f"the worktree is {where}, not on its own branch `{branch}`"
    if default_branch in (branch, remote):
        return f"`{remote}` is the default branch, which the service never pushes to"
    owned = {branch, f"{prefix}{branch}"} | ({recorded.remote_branch} if recorded else set())
    if remote not in owned:
        return f"`{remote}` is not this environment's branch (`{branch}`)"
    return None


def agent_author(plan: AgentPlan | None) -> tuple[str, str]:
    """The author of the service's commit of the agent's work: the agent, by its program's name (the
    script's, for `python agent.py`)."""
    program = ""
    if plan is not None and plan.kind == "workflow":
        program = plan.workflow or ""
    elif plan is not None and plan.argv:
        names = [PurePath(word).name for word in plan.argv if not word.startswith("-")]
        program = names[0] if names else ""
        if _INTERPRETER.match(program) and len(names) > 1:
            program = PurePath(names[1]).stem
    slug = re.sub(r"[^a-z0-9-]+", "-", program.lower()).strip("-") or "agent"
    name = _AGENTS.get(slug, f"{program or 'coding'} agent")
    return name, f"{slug}@agents.isolator.invalid"


def parse_identity(value: str) -> tuple[str, str]:
    """`Name <email>` (RESULTS_COMMITTER, validated at start)."""
    name, _, email = value.partition(" <")
    return name.strip(), email.rstrip(">").strip()


def first_line(text: str, limit: int = 100) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[:limit - 1].rstrip() + "…"


def pr_label(pull: PullRequestRef) -> str:
    """`Draft PR #57: <link>`, `PR #57: <link>`."""
    return f"{'Draft PR' if pull.draft else 'PR'} #{pull.number}: {pull.url}"


def commits_text(count: int) -> str:
    return f"{count} commit{'s' if count != 1 else ''}"


def where_the_work_is(environment: EnvironmentRef, why: str) -> str:
    return (f"The work stays on the server, on branch `{environment.branch}` ({environment.working_path}): "
            f"nothing was pushed, {why}. `/worktree why {environment.branch}` shows it.")
