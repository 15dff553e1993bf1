"""The agent: its program runs and says its version, and its model key is set (or its own login is there)."""

from __future__ import annotations

import json
import os
import shutil
import tomllib
from pathlib import Path
from typing import Any

from activities.doctor.check import Check
from activities.runs.agents import EXAMPLE_AGENT, HOW_TO_GET, program_path
from activities.runs.agents.configs import operators_folder
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
    found = _credentials(settings, driver)
    if found is not None:
        return Check.passed(name, f"set ({found})")
    wanted = CREDENTIALS[driver]
    if driver == "codex" and (variable := _codex_key_variable(_folder(settings, driver))) != "OPENAI_API_KEY":
        wanted = f"{variable} (the `env_key` of its provider in config.toml), or log Codex in (`codex login`)"
    return Check.failed(name, "no key is set", f"set {wanted}")


def _credentials(settings: Settings, driver: str) -> str | None:
    """Where the agent finds its credentials (None: nowhere): its variables, the file its own login writes,
    or (Claude Code) its settings.json's `env` or `apiKeyHelper`, (Codex) the variable its provider's
    `env_key` names."""
    if driver == "aider":  # its model may be anyone's: any provider's key will do
        return next((name for name, value in os.environ.items() if name.endswith("_API_KEY") and value), None)
    folder = _folder(settings, driver)
    if driver == "claude":
        configured = _json(folder / "settings.json")
        variables = configured.get("env") if isinstance(configured.get("env"), dict) else {}
        for variable in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
            if os.environ.get(variable):
                return variable
            if variables.get(variable):
                return f"{variable} in settings.json"
        if configured.get("apiKeyHelper"):
            return "apiKeyHelper in settings.json"
        return "its login, .credentials.json" if (folder / ".credentials.json").is_file() else None
    if os.environ.get(variable := _codex_key_variable(folder)):
        return variable
    return "its login, auth.json" if (folder / "auth.json").is_file() else None


def _folder(settings: Settings, driver: str) -> Path:
    folder = operators_folder(driver, Path(settings.agent_home))
    assert folder is not None, "claude and codex have a folder"
    return folder


def _json(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _codex_key_variable(folder: Path) -> str:
    """The variable Codex reads its key from: its chosen provider's `env_key` in config.toml, else OPENAI_API_KEY."""
    try:
        config = tomllib.loads((folder / "config.toml").read_text())
        named = config["model_providers"][config["model_provider"]]["env_key"]
    except (OSError, ValueError, KeyError, TypeError):
        return "OPENAI_API_KEY"
    return named if isinstance(named, str) and named else "OPENAI_API_KEY"
