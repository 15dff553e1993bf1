"""The agent: its program runs and says its version, and its model key is set (or its own login is there)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from activities.doctor.check import Check
from activities.runs.agents import EXAMPLE_AGENT, HOW_TO_GET, program_path
from activities.runs.outcome import CREDENTIALS
from activities.runs.queue import plan_for
from activities.sandbox.processes import brief_output
from isolator.settings import Settings

VERSION_TIMEOUT_SECONDS = 30


async def agent_checks(settings: Settings) -> list[Check]:
    """Nothing to check when no agent answers, or a workflow of other workers does."""
    plan = plan_for(settings, None)
    if plan.kind != "command":
        return []
    if plan.driver == "command":
        found = shutil.which(plan.argv[0])
        name = f"Agent: AGENT_COMMAND `{plan.argv[0]}`"
        return [Check.passed(name, found) if found else
                Check.failed(name, "it is not found", "install it, or set AGENT_COMMAND to its path")]
    if plan.argv[0] == str(EXAMPLE_AGENT):
        # It takes any flag for a message and answers it (writing NOTES.md where it runs), and needs no model.
        return [Check.passed("Agent: the example agent", "it answers without a model or key")]
    return [await _version(plan.driver, plan.argv[0]), key(settings, plan.driver)]


async def _version(driver: str, program: str) -> Check:
    name = f"Agent: {driver} (`{program}` --version)"
    found = program_path(driver, program)
    if found is None:
        return Check.failed(name, "it is not found", f"{HOW_TO_GET[driver]}, or set AGENT_EXECUTABLE to it")
    answer = await brief_output([found, "--version"], VERSION_TIMEOUT_SECONDS, errors_too=True)
    if answer is None:
        return Check.failed(name, f"it does not run (it cannot start, or answers nothing in "
                                  f"{VERSION_TIMEOUT_SECONDS:g} s)", f"reinstall it: {HOW_TO_GET[driver]}")
    returncode, output = answer
    said = output.decode(errors="replace").strip().splitlines()
    if returncode != 0:
        return Check.failed(name, f"it exits with {returncode}" + (f": {said[-1]}" if said else ""),
                            f"run `{found} --version` to see why, or reinstall it: {HOW_TO_GET[driver]}")
    return Check.passed(name, said[0] if said else found)


def key(settings: Settings, driver: str) -> Check:
    """Whether the driver will find credentials: its key in the environment, or the file its own login writes."""
    name = f"Agent key ({driver})"
    if _has_credentials(settings, driver):
        return Check.passed(name, "set")
    return Check.failed(name, "no key is set", f"set {CREDENTIALS[driver]}")


def _has_credentials(settings: Settings, driver: str) -> bool:
    keys = {"claude": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"),
            "codex": ("OPENAI_API_KEY",)}
    if driver == "aider":  # its model may be anyone's: any provider's key will do
        return any(name.endswith("_API_KEY") and value for name, value in os.environ.items())
    if any(os.environ.get(name) for name in keys[driver]):
        return True
    home = Path(settings.agent_home)
    logins = {"claude": [Path(os.environ.get("CLAUDE_CONFIG_DIR", home / ".claude")) / ".credentials.json"],
              "codex": [Path(os.environ.get("CODEX_HOME", home / ".codex")) / name for name in ("auth.json", "config.toml")]}
    return any(path.is_file() for path in logins[driver])
