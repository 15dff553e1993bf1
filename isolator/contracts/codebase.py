"""Codebases: a repository checkout the service makes worktrees of, and how one is registered."""

from __future__ import annotations

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


@dataclass
class RepositoryInfo:
    name: str
    canonical_path: str
    default_branch: str
    repository_url: str | None
    host: str


@dataclass
class RegisteredCodebase:
    codebase: Codebase
    # False when the repository was already registered and nothing was cloned
    created: bool
