"""The Dockerfile builds the service the way pyproject.toml and the compose file expect."""

from __future__ import annotations

import re
import shlex
import tomllib

import yaml

from tests.compose_files import DOCKERFILE, PYPROJECT


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "")
        for line in lines if line and not line.startswith("#")
    ]


def test_dockerfile_builds_the_service_on_python_slim_with_git() -> None:
    instructions = dockerfile_instructions()
    bases = [args for instruction, args in instructions if instruction == "FROM"]
    assert bases and bases[-1].split()[0].startswith("python:3.11-slim"), f"not based on python:3.11-slim: {bases}"
    runs = [args for instruction, args in instructions if instruction == "RUN"]
    assert any(re.search(r"apt-get install\b[^&;|]*\sgit(\s|$)", run) for run in runs), "git is not installed"
    assert any(re.search(r"pip install\b[^&;|]*\s\.(\s|$)", run) for run in runs), "the project is not installed"
    assert not re.search(r"\b(curl|wget)\b", DOCKERFILE.read_text()), "nothing is downloaded outside pip and apt"


def test_dockerfile_copies_everything_the_package_build_needs() -> None:
    project = tomllib.loads(PYPROJECT.read_text())
    needed = {"pyproject.toml", project["project"]["readme"]}
    needed |= {pattern.rstrip("*") for pattern in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    copied: set[str] = set()
    for instruction, args in dockerfile_instructions():
        if instruction in {"COPY", "ADD"}:
            words = [word for word in shlex.split(args) if not word.startswith("--")]
            copied |= {word.rstrip("/") for word in words[:-1]}
    assert "." in copied or needed <= copied, f"not copied into the image: {sorted(needed - copied)}"


def test_dockerfile_runs_isolator_as_a_non_root_user() -> None:
    instructions = dockerfile_instructions()
    users = [args.split(":")[0].strip() for instruction, args in instructions if instruction == "USER"]
    assert users and users[-1] not in {"root", "0"}, "the container runs as root"
    entrypoints = [args for instruction, args in instructions if instruction == "ENTRYPOINT"]
    assert entrypoints and yaml.safe_load(entrypoints[-1]) == ["isolator"], "the entrypoint is not `isolator`"
