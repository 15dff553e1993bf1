"""Ready to work: the repository's set-up (`.isolator.toml` on the default branch) runs in each new
worktree, with ports of its own and none of the service's secrets; teardown runs before removal.
Real git, PostgreSQL and Temporal, through the test adapter."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import uuid
from pathlib import Path

import pytest

from isolator.contracts.environment import environment_workflow_id
from isolator.settings import Settings
from tests.conftest import Stack
from tests.gitrepos import clone_with_origin, created_reply, first_replies, git, log_git_fetches, push_to_origin
from workflows.chat.agent_texts import no_agent

SECRETS = {"DATABASE_URL": "postgresql://secret", "GITHUB_TOKEN": "ghp_secret", "SLACK_BOT_TOKEN": "xoxb-secret",
           "API_TOKEN": "api-secret", "TELEGRAM_BOT_TOKEN": "123:secret"}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Room for the thirty environments of the ports test."""
    return settings.model_copy(update={"max_worktrees_per_codebase": 40})


def commit_config(repo: Path, text: str, branch: str = "main") -> None:
    git("checkout", "-q", branch, cwd=repo)
    (repo / ".isolator.toml").write_text(text)
    git("add", ".isolator.toml", cwd=repo)
    git("commit", "-q", "-m", "set-up", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)


async def settled(stack: Stack, environment_id: str, seconds: float = 60) -> str:
    """The environment's set-up state once it has run."""
    for _ in range(int(seconds * 20)):
        state = await stack.db.fetchval("SELECT setup_state FROM isolation_environments WHERE id = $1",
                                        uuid.UUID(environment_id))
        if state not in ("none", "running"):
            return state
        await asyncio.sleep(0.05)
    raise AssertionError(f"the set-up of {environment_id} did not end")


async def why_not_ready(stack: Stack, environment_id: str) -> str:
    """For a failed assertion: the set-up's note, and the steps of the environment's workflow that
    failed or timed out, with why."""
    note = await stack.db.fetchval("SELECT setup_note FROM isolation_environments WHERE id = $1",
                                   uuid.UUID(environment_id))
    handle = stack.temporal.get_workflow_handle(environment_workflow_id(environment_id))
    failures = []
    async for event in handle.fetch_history_events():
        for name in ("activity_task_failed_event_attributes", "activity_task_timed_out_event_attributes"):
            if event.HasField(name):
                failures.append(f"{name.split('_event')[0]}: {getattr(event, name).failure.message}")
    return f"{environment_id}: note {note!r}, failures {failures}"


async def ports_of(stack: Stack, environment_id: str) -> list[int]:
    rows = await stack.db.fetch("SELECT port FROM port_allocations WHERE environment_id = $1 ORDER BY port",
                                uuid.UUID(environment_id))
    return [row["port"] for row in rows]


async def test_setup_runs_in_the_new_worktree_with_its_ports_and_no_secrets(
    stack: Stack, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    commit_config(repo, '[setup]\ncommands = ["echo built > built.txt", "env > setup-env.txt"]\n'
                        '[worktree]\nports = 3\n')
    await stack.register(repo)

    created = (await stack.say("setup-1", "build it"))["result"]
    assert await settled(stack, created["environmentId"]) == "ready"

    worktree = Path(created["workingPath"])
    assert (worktree / "built.txt").read_text() == "built\n"
    environment = dict(line.split("=", 1) for line in (worktree / "setup-env.txt").read_text().splitlines()
                       if "=" in line)
    ports = await ports_of(stack, created["environmentId"])
    assert len(ports) == 3 and ports == list(range(ports[0], ports[0] + 3))
    assert environment["ISOLATOR_PORT"] == str(ports[0])
    assert environment["ISOLATOR_PORTS"] == f"{ports[0]}-{ports[-1]}"
    assert environment["ISOLATOR_BRANCH"] == created["branch"]
    assert environment["ISOLATOR_WORKTREE"] == str(worktree)
    assert environment["COMPOSE_PROJECT_NAME"].startswith(f"project-{created['branch']}-")
    assert not set(SECRETS) & set(environment), "none of the service's secrets reaches a set-up command"
    assert not any(value in (worktree / "setup-env.txt").read_text() for value in SECRETS.values())
    # Quick and fine: the creation reply, and that no agent answers (none is configured), are all that is said.
    assert await stack.replies("setup-1") == first_replies(created["branch"], repo)


async def test_a_failing_setup_is_reported_with_its_output_and_runs_again_on_command(stack: Stack, repo: Path) -> None:
    commit_config(repo, '[setup]\ncommands = ["echo preparing", '
                        '"test -f ready.flag || { echo missing ready.flag; exit 3; }"]\n')
    await stack.register(repo)

    created = (await stack.say("setup-2", "go"))["result"]
    assert await settled(stack, created["environmentId"]) == "failed"
    for _ in range(100):
        replies = await stack.replies("setup-2")
        if len(replies) == 3:
            break
        await asyncio.sleep(0.05)
    # The creation reply, then that no agent answers and the set-up's report: the environment's workflow
    # reports while the message's says the notice, so either may come first.
    assert replies[0] == created_reply(created["branch"], repo) and len(replies) == 3, replies
    assert replies.count(no_agent()) == 1, replies
    (failure,) = [reply for reply in replies[1:] if reply != no_agent()]
    assert failure.startswith(f"Set-up of `{created['branch']}` failed: "
                              "`test -f ready.flag || { echo missing ready.flag; exit 3; }` exited with code 3.")
    assert "missing ready.flag" in failure and "/worktree setup" in failure
    status = (await stack.say("setup-2", "/status"))["result"]["replies"][0]
    assert "Set-up: failed (`/worktree setup` runs it again)" in status

    (Path(created["workingPath"]) / "ready.flag").write_text("")
    again = (await stack.say("setup-2", "/worktree setup"))["result"]["replies"]
    assert again == [f"The set-up of `{created['branch']}` ran again: it is ready."]
    assert await settled(stack, created["environmentId"]) == "ready"


async def test_a_slow_setup_shows_its_progress_in_one_message_updated_in_place(stack: Stack, repo: Path) -> None:
    commit_config(repo, '[setup]\ncommands = ["sleep 6.5"]\n')
    await stack.register(repo)

    created = (await stack.say("setup-3", "go"))["result"]
    assert created["replies"] == first_replies(created["branch"], repo), "no agent: said at once"
    for _ in range(200):  # progress is shown after 5 s
        replies = await stack.replies("setup-3")
        if len(replies) == 3:
            break
        await asyncio.sleep(0.05)
    assert replies[:2] == first_replies(created["branch"], repo)
    assert replies[2].startswith(f"Setting up `{created['branch']}`: `sleep 6.5` (1/1), ")
    assert await settled(stack, created["environmentId"]) == "ready"
    replies = await stack.replies("setup-3")
    assert len(replies) == 3, "the same message, updated"
    assert replies[2] == f"Ready in 6 s: `{created['branch']}` is set up."


async def test_setup_comes_from_the_default_branch_never_from_the_worktrees_own_branch(
    stack: Stack, repo: Path
) -> None:
    commit_config(repo, '[setup]\ncommands = ["echo from-main > ran.txt"]\n')
    git("branch", "task-edited", cwd=repo)
    commit_config(repo, '[setup]\ncommands = ["echo from-the-branch > ran.txt"]\n', branch="task-edited")
    await stack.register(repo)

    created = (await stack.say("setup-4", "/worktree create edited"))["result"]
    row = await stack.db.fetchrow("SELECT id, working_path FROM isolation_environments WHERE branch_name = 'task-edited'")
    assert created["outcome"] == "command"
    assert await settled(stack, str(row["id"])) == "ready"
    assert (Path(row["working_path"]) / "ran.txt").read_text() == "from-main\n"


async def test_a_malformed_file_is_named_with_its_line_and_the_worktree_is_still_made(stack: Stack, repo: Path) -> None:
    commit_config(repo, '[setup]\ncommands = "npm ci"\n')
    await stack.register(repo)

    created = (await stack.say("setup-5", "go"))["result"]

    assert Path(created["workingPath"]).is_dir()
    (reply, notice) = created["replies"]
    assert notice == no_agent()
    assert reply.endswith("\n`.isolator.toml`, line 2: `setup.commands` must be a list. "
                          "The worktree was made without its set-up.")
    assert await settled(stack, created["environmentId"]) == "skipped"


async def test_ports_are_unique_across_thirty_creations_at_once_and_released_after_removal(
    stack: Stack, repo: Path
) -> None:
    await stack.register(repo)
    conversations = [f"ports-{number}" for number in range(30)]
    made = await asyncio.gather(*(stack.say(conversation, "go") for conversation in conversations))
    environments = [answer["result"]["environmentId"] for answer in made]
    states = {environment: await settled(stack, environment) for environment in environments}
    assert set(states.values()) == {"ready"}, [await why_not_ready(stack, environment)
                                               for environment, state in states.items() if state != "ready"]

    blocks = [await ports_of(stack, environment) for environment in environments]
    assert all(block == list(range(block[0], block[0] + 10)) for block in blocks)
    every = [port for block in blocks for port in block]
    assert len(every) == len(set(every)) == 300

    for conversation in conversations:
        await stack.say(conversation, "/worktree remove")
    remaining = await stack.db.fetchval(
        "SELECT count(*) FROM port_allocations WHERE environment_id = ANY($1::uuid[])",
        [uuid.UUID(environment) for environment in environments],
    )
    assert remaining == 0


async def test_teardown_runs_before_the_worktree_is_removed(stack: Stack, repo: Path, tmp_path: Path) -> None:
    log = tmp_path / "teardown.log"
    commit_config(repo, '[teardown]\ncommands = ["test -d \\"$ISOLATOR_WORKTREE\\" && echo '
                        f'\\"down $ISOLATOR_PORT\\" >> {log}"]\n')
    await stack.register(repo)
    created = (await stack.say("setup-6", "go"))["result"]
    assert await settled(stack, created["environmentId"]) == "ready"
    (first, *_) = await ports_of(stack, created["environmentId"])

    removed = (await stack.say("setup-6", "/worktree remove"))["result"]["replies"]

    assert removed[0].startswith("Removed worktree"), removed
    assert log.read_text() == f"down {first}\n", "it ran while the worktree was still there"
    assert not Path(created["workingPath"]).exists()


async def test_a_message_that_arrives_during_setup_waits_for_it(stack: Stack, repo: Path) -> None:
    commit_config(repo, '[setup]\ncommands = ["sleep 2", "echo done > done.txt"]\n')
    await stack.register(repo)
    created = (await stack.say("setup-7", "go"))["result"]
    for _ in range(200):
        state = await stack.db.fetchval("SELECT setup_state FROM isolation_environments WHERE id = $1",
                                        uuid.UUID(created["environmentId"]))
        if state == "running":
            break
        await asyncio.sleep(0.01)

    again = (await stack.say("setup-7", "and now?"))["result"]

    assert again["outcome"] == "reused"
    assert (Path(created["workingPath"]) / "done.txt").exists(), "the message ended after the set-up"
    assert await settled(stack, created["environmentId"]) == "ready"


async def test_a_forced_removal_stops_a_running_setup_and_leaves_none_of_its_processes(
    stack: Stack, repo: Path, tmp_path: Path
) -> None:
    pid_file = tmp_path / "child.pid"
    # The child carries the file's name, so the test finds it on the host: in the sandbox, `$!` is an
    # id of the set-up's own PID namespace.
    child_command = f"{sys.executable} -c 'import time; time.sleep(300)' {pid_file}"
    commit_config(repo, f'[setup]\ncommands = ["{child_command} & echo $! > {pid_file}; wait"]\n')
    await stack.register(repo)
    created = (await stack.say("setup-8", "go"))["result"]
    for _ in range(400):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.05)
    child = next(int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()
                 and _command_line(entry)[1:2] == [b"-c"] and str(pid_file).encode() in _command_line(entry))

    removed = (await stack.say("setup-8", "/worktree remove --force"))["result"]["replies"]

    assert removed[0].startswith("Removed worktree"), removed
    assert not Path(created["workingPath"]).exists()
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)  # the set-up's child went with its process group
    assert await stack.db.fetchval("SELECT setup_state FROM isolation_environments WHERE id = $1",
                                   uuid.UUID(created["environmentId"])) == "failed"


async def test_a_worktree_gone_behind_our_back_is_retired_without_running_its_teardown(
    stack: Stack, repo: Path, tmp_path: Path
) -> None:
    log = tmp_path / "teardown.log"
    commit_config(repo, f'[teardown]\ncommands = ["echo down >> {log}"]\n')
    await stack.register(repo)
    created = (await stack.say("setup-9", "go"))["result"]
    assert await settled(stack, created["environmentId"]) == "ready"
    shutil.rmtree(created["workingPath"])

    again = (await stack.say("setup-9", "still there?"))["result"]

    assert again["outcome"] == "created"
    handle = stack.temporal.get_workflow_handle(f"environment:{created['environmentId']}")
    report = await asyncio.wait_for(handle.result(), timeout=60)  # its removal is done
    assert report["outcome"] == "already_gone"
    assert not log.exists(), "nothing to run a teardown in"


async def test_the_next_new_worktree_has_what_was_just_pushed_and_a_burst_fetches_once(
    stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    origin, checkout = clone_with_origin(tmp_path)
    await stack.register(checkout)
    pushed = push_to_origin(origin, tmp_path, "news")
    shim, fetches = log_git_fetches(tmp_path)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")

    made = await asyncio.gather(*(stack.say(f"burst-{number}", "go") for number in range(20)))

    assert fetches.read_text().splitlines() == ["fetch"], "twenty new worktrees, one fetch"
    for answer in made:
        result = answer["result"]
        assert git("rev-parse", "HEAD", cwd=Path(result["workingPath"])).strip() == pushed
        assert result["replies"][0] == (f"Working in isolated branch `{result['branch']}`, "
                                        f"from `main` at `{pushed[:7]}`")


async def test_with_origin_unreachable_the_worktree_is_made_from_the_local_branch_and_the_reply_says_so(
    stack: Stack, tmp_path: Path
) -> None:
    _, checkout = clone_with_origin(tmp_path)
    git("remote", "set-url", "origin", str(tmp_path / "moved-away.git"), cwd=checkout)
    await stack.register(checkout)
    local = git("rev-parse", "main", cwd=checkout).strip()

    result = (await stack.say("unreachable", "go"))["result"]

    assert result["outcome"] == "created"
    assert git("rev-parse", "HEAD", cwd=Path(result["workingPath"])).strip() == local
    (reply, notice) = result["replies"]
    assert notice == no_agent()
    assert reply.startswith(f"Working in isolated branch `{result['branch']}`, from the local `main` at "
                            f"`{local[:7]}` (`origin` could not be reached (")
    assert reply.endswith("), so nothing was fetched)")


async def test_a_repository_with_nothing_to_set_up_takes_no_set_up_step(stack: Stack, repo: Path) -> None:
    """No command and no submodule: the worktree is ready at once, with its ports, and no activity
    runs for the set-up (one that only reported "nothing" could time out on a loaded host)."""
    await stack.register(repo)
    created = (await stack.say("nothing-to-set-up", "go"))["result"]

    assert await settled(stack, created["environmentId"]) == "ready"
    assert len(await ports_of(stack, created["environmentId"])) == 10
    handle = stack.temporal.get_workflow_handle(environment_workflow_id(created["environmentId"]))
    scheduled = [event.activity_task_scheduled_event_attributes.activity_type.name
                 async for event in handle.fetch_history_events()
                 if event.HasField("activity_task_scheduled_event_attributes")]
    assert "run_commands" not in scheduled


async def test_submodules_are_checked_out_by_the_setup(
    stack: Stack, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    library = tmp_path / "library"
    library.mkdir()
    git("init", "-q", "-b", "main", cwd=library)
    (library / "lib.txt").write_text("the library\n")
    git("add", ".", cwd=library)
    git("commit", "-q", "-m", "library", cwd=library)
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "vendor/library", cwd=repo)
    git("commit", "-q", "-m", "a submodule", cwd=repo)
    # Submodules from a local path are refused by default since git 2.38.1; a real one comes over the network.
    for name, value in {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "protocol.file.allow",
                        "GIT_CONFIG_VALUE_0": "always"}.items():
        monkeypatch.setenv(name, value)
    await stack.register(repo)

    created = (await stack.say("submodules", "go"))["result"]

    assert await settled(stack, created["environmentId"]) == "ready"
    assert (Path(created["workingPath"]) / "vendor" / "library" / "lib.txt").read_text() == "the library\n"


def _command_line(process: Path) -> list[bytes]:
    try:
        return (process / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return []
