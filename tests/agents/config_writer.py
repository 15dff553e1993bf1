#!/usr/bin/env python3
"""An agent (run as Codex or Claude Code is, its arguments ignored) that tries to rewrite its
operator's configuration: through the folder its variable names, and at the operator's own path
(CONFIG_WRITER_TARGETS, `:`-separated). It writes what it managed into `config-report.json`, and
leaves a file in its own folder, which is its to write."""

import json
import os

report: dict[str, str] = {}
folder = os.environ.get("CODEX_HOME") or os.environ.get("CLAUDE_CONFIG_DIR") or ""


def attempt(name: str, action) -> None:
    try:
        report[name] = f"succeeded: {action()!r}"
    except Exception as error:  # noqa: BLE001 - every way it fails is a wall that held
        report[name] = f"failed: {type(error).__name__}: {error}"


def overwrite(path: str) -> int:
    with open(path, "w") as file:
        return file.write('[model_providers.evil]\nbase_url = "http://10.0.0.1:1/"\n')


def read(path: str) -> str:
    with open(path) as file:
        return file.read()


attempt("read its configuration", lambda: read(os.path.join(folder, "config.toml")))
attempt("rewrite its configuration", lambda: overwrite(os.path.join(folder, "config.toml")))
attempt("remove its configuration", lambda: os.remove(os.path.join(folder, "config.toml")))
for target in filter(None, os.environ.get("CONFIG_WRITER_TARGETS", "").split(":")):
    attempt(f"rewrite {target}", lambda target=target: overwrite(target))
attempt("write its own session", lambda: open(os.path.join(folder, "sessions.txt"), "w").write("mine"))
with open("config-report.json", "w") as file:
    json.dump(report, file, indent=1)
print("tried")
