"""Several hosts: each codebase's git work happens on its own host, and either API serves any conversation."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.gitrepos import make_repo, worktree_paths
from tests.hosts.cluster import Cluster

CONVERSATIONS_PER_CODEBASE = 2


async def test_each_worktree_is_made_on_its_codebases_host_and_either_api_answers(cluster: Cluster) -> None:
    repos: dict[str, Path] = {}
    for name, host in cluster.hosts.items():
        repos[name] = make_repo(host.folder / "repos" / f"project-{name}")
        await cluster.register(name, repos[name], api=len(repos) % 2)

    paths: dict[str, Path] = {}
    for number, (name, host) in enumerate((name, host) for name, host in cluster.hosts.items()
                                          for _ in range(CONVERSATIONS_PER_CODEBASE)):
        conversation = f"routing-{name}-{number}"
        await cluster.say(conversation, f"/clone project-{name}", api=number % 2)
        answer = await cluster.say(conversation, "hello", api=(number + 1) % 2)
        path = Path(answer["result"]["workingPath"])
        assert path.is_relative_to(host.worktree_base / f"project-{name}"), (name, path)
        assert path.is_dir()
        paths[conversation] = path

    for name, repo in repos.items():  # each checkout knows its own worktrees, and no other host's
        mine = sorted(str(path) for conversation, path in paths.items() if f"-{name}-" in conversation)
        assert sorted(worktree_paths(repo)) == mine
    for other in cluster.hosts.values():
        made = {path for path in paths.values() if path.is_relative_to(other.worktree_base)}
        assert len(made) == CONVERSATIONS_PER_CODEBASE, (other.name, made)

    for conversation in paths:  # the same replies through either API, each once
        first, second = await cluster.replies(conversation, api=0), await cluster.replies(conversation, api=1)
        assert first == second
        assert sum("Working in isolated branch" in text for text in first) == 1, first
        assert all(count == 1 for count in Counter(first).values()), first
