"""A repository's real set-up works in the sandbox's view (issue 46): `python3 -m venv` with the python3
of the worker's PATH, `npm ci` from a registry on the host's loopback that the service's
NPM_CONFIG_REGISTRY names, and `make`, each run by the environment's workflow in bubblewrap with
SANDBOX_NETWORK=egress. Real git, PostgreSQL, Temporal and bubblewrap; traffic only to loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.conftest import Stack
from tests.fakes.npm_registry import NpmRegistry, packed
from tests.gitrepos import git
from tests.workflows.test_ready_to_work import commit_config, settled, why_not_ready

PACKAGE = packed("tiny-greeting", "1.0.0", {"index.js": "module.exports = 'hello';\n"})
# Make wants a tab before each recipe line.
MAKEFILE = "built.txt:\n\techo made by make > built.txt\n"
SETUP = """[setup]
commands = [
  "python3 -m venv .venv",
  '.venv/bin/python -c "import sys; print(sys.prefix)" > prefix.txt',
  "npm ci",
  "make",
]
"""


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """No SANDBOX_READABLE_PATHS (the tests' own Python is listed there by default): python3, node and
    make must come from the worker's PATH and the system alone, as on a host nobody configured."""
    return settings.model_copy(update={"sandbox_readable_paths": None})


@pytest.fixture
def registry() -> Iterator[NpmRegistry]:
    registry = NpmRegistry(PACKAGE)
    registry.start()
    yield registry
    registry.stop()


def commit_project(repo: Path, registry: NpmRegistry) -> None:
    """A package.json with one dependency, its lockfile (version 3, as npm 7 and later write it)
    resolving it at the registry, and a Makefile."""
    dependencies = {PACKAGE.name: PACKAGE.version}
    lockfile = {
        "name": "project", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
        "packages": {
            "": {"name": "project", "version": "1.0.0", "dependencies": dependencies},
            f"node_modules/{PACKAGE.name}": {"version": PACKAGE.version, "resolved": registry.tarball_url,
                                             "integrity": PACKAGE.integrity},
        },
    }
    files = {"package.json": json.dumps({"name": "project", "version": "1.0.0", "dependencies": dependencies}),
             "package-lock.json": json.dumps(lockfile, indent=2), "Makefile": MAKEFILE}
    for name, text in files.items():
        (repo / name).write_text(text)
    git("add", *files, cwd=repo)
    git("commit", "-q", "-m", "a project with a venv, an npm dependency and a Makefile", cwd=repo)


async def test_a_set_up_makes_a_venv_installs_from_npm_and_runs_make_in_the_sandbox(
    stack: Stack, repo: Path, registry: NpmRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert (stack.settings.sandbox, stack.settings.sandbox_network) == ("on", "egress"), "what this test is about"
    # The service's own variable: npm reads it, and the egress proxy lets the sandbox reach its port.
    monkeypatch.setenv("NPM_CONFIG_REGISTRY", registry.url)
    commit_project(repo, registry)
    commit_config(repo, SETUP)
    await stack.register(repo)

    created = (await stack.say("toolchains-1", "set it up"))["result"]
    state = await settled(stack, created["environmentId"], seconds=240)
    assert state == "ready", (await why_not_ready(stack, created["environmentId"]),
                              await stack.replies("toolchains-1"))

    worktree = Path(created["workingPath"])
    assert (worktree / "prefix.txt").read_text() == f"{worktree / '.venv'}\n", "the venv's own Python ran"
    installed = json.loads((worktree / "node_modules" / PACKAGE.name / "package.json").read_text())
    assert installed["version"] == PACKAGE.version
    assert PACKAGE.tarball_path in registry.requested, registry.requested
    assert (worktree / "built.txt").read_text() == "made by make\n"
