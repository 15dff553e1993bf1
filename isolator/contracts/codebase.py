"""Codebases: a repository checkout the service makes worktrees of, and how one is registered."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass
class Codebase:
    id: str
    name: str
    canonical_path: str
    default_branch: str
    host: str
    repository_url: str | None = None


@dataclass
class RepositorySource:
    """Where a codebase comes from: a local checkout, a clone URL, or both."""

    host: str
    path: str | None = None
    url: str | None = None
    name: str | None = None
    # a path from chat: its checkout, links resolved, must lie under one of these (CLONE_ALLOWED_ROOTS)
    allowed_roots: list[str] | None = None


@dataclass
class RepositoryInfo:
    name: str
    canonical_path: str
    default_branch: str
    repository_url: str | None
    host: str
    # the registering workflow: a record made by it is its own, also when the step runs again
    registered_by: str | None = None


@dataclass
class RegisteredCodebase:
    """A registration's outcome: the codebase, or (codebase None) the user's mistake that kept it from
    being registered, said in `problem` (an answer, not a failed workflow)."""

    codebase: Codebase | None
    # False when the repository was already registered and nothing was cloned
    created: bool
    problem: str | None = None
    problem_type: str | None = None  # its error type (isolator/contracts/errors.py): NameTaken, InvalidRepository, ...


def repository_full_name(url: str | None) -> str | None:
    """`owner/repo` of a clone URL (https or ssh, with or without `.git`); None for anything else."""
    if not url:
        return None
    match = re.search(r"[/:]([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$", url)
    return f"{match.group(1)}/{match.group(2)}" if match else None
