"""Shared pieces of the bad-input suite: deterministic Hypothesis examples, hostile values, payload
mutations, and what Temporal has started on a test's task queue."""

from __future__ import annotations

import asyncio
import copy
import json
import os
from pathlib import Path
from typing import Any, Iterable, TypeVar

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from temporalio.service import RPCError, RPCStatusCode

from tests.conftest import Stack

T = TypeVar("T")

# Strings that have broken services before: path escapes, option-looking names, git's reflog syntax,
# NUL and other control characters, lone surrogates, right-to-left marks, and sheer length.
HOSTILE_STRINGS = [
    "", " ", "..", "../../etc", "..\\..\\etc", "/etc/passwd", "-rf", "--force", "@{-1}", "a@{u}", "~", "~root",
    "a/../../b", "foo.lock", ".git", "a..b", "\x00", "a\x00b", "\x07\x1b[31m", "\r\nX-Injected: 1", "\t",
    "\ud800", "a\udfffb", "\u202eevil", "\ufeff", "%2e%2e%2f", "x" * 300, "${HOME}", "$(id)", "`id`", "'; --",
]


def hostile_text() -> st.SearchStrategy[str]:
    return st.sampled_from(HOSTILE_STRINGS) | st.text(max_size=40)


def json_values() -> st.SearchStrategy[Any]:
    """Any JSON value, hostile strings and very large numbers included."""
    scalars = (
        st.none() | st.booleans() | st.integers() | st.sampled_from([2**63, -(2**63) - 1, 10**30, 0, -1])
        | st.floats(allow_nan=False, allow_infinity=False) | hostile_text()
    )
    return st.recursive(
        scalars,
        lambda children: st.lists(children, max_size=3) | st.dictionaries(hostile_text(), children, max_size=3),
        max_leaves=8,
    )


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path into nested dicts and lists."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*prefix, index))
    return found


def _apply(payload: Any, path: tuple, replacement: Any, delete: bool) -> None:
    parent = payload
    for step in path[:-1]:
        parent = parent[step]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = replacement


@st.composite
def mutated(draw: st.DrawFn, payloads: list[Any]) -> Any:
    """A valid payload with one to three fields changed: a hostile string spliced into a string (which
    keeps, say, the mention of the bot), a field replaced by any JSON value, or a field deleted."""
    payload = copy.deepcopy(draw(st.sampled_from(payloads)))
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(payload)
        if not paths:
            break
        strings = [path for path in paths if isinstance(_get(payload, path), str)]
        how = draw(st.sampled_from(["splice", "splice", "replace", "delete"]))
        if how == "splice" and strings:
            path = draw(st.sampled_from(strings))
            spliced = draw(st.sampled_from(HOSTILE_STRINGS))
            original = _get(payload, path)
            _apply(payload, path, draw(st.sampled_from([original + spliced, spliced + " " + original])), False)
        else:
            path = draw(st.sampled_from(paths))
            replacement = draw(st.sampled_from(HOSTILE_STRINGS) | json_values())
            _apply(payload, path, replacement, delete=how == "delete")
    return payload


def _get(payload: Any, path: tuple) -> Any:
    for step in path:
        payload = payload[step]
    return payload


def type_confusions(payload: Any) -> list[Any]:
    """The payload once per field with that field set to a value of another type: a list, a number, null.

    Systematic where the fuzzing is random: a parser that trusts a field's type fails here for sure.
    """
    confused = []
    for path in _paths(payload):
        for wrong in ([], 5, None):
            if _get(payload, path) != wrong:
                changed = copy.deepcopy(payload)
                _apply(changed, path, wrong, delete=False)
                confused.append(changed)
    return confused


def bodies(valid: list[Any]) -> st.SearchStrategy[bytes]:
    """Raw bytes, any JSON, or (most often) one of the `valid` payloads mutated."""
    as_json = st.one_of(json_values(), mutated(valid), mutated(valid), mutated(valid)).map(json.dumps)
    return st.binary(max_size=64) | as_json.map(str.encode)


def draw_examples(strategy: st.SearchStrategy[T], count: int) -> list[T]:
    """`count` examples of `strategy`, the same ones on every run (derandomized, no example database).

    Drawn up front, then sent from the async test: the test can compare Temporal before and after.
    """
    found: list[T] = []

    @settings(
        max_examples=count, derandomize=True, database=None, deadline=None,
        phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(example: T) -> None:
        found.append(example)

    collect()
    return found


async def workflow_exists(stack: Stack, workflow_id: str) -> bool:
    """Asked of Temporal's store itself, which (unlike a listing) never lags."""
    try:
        await stack.temporal.get_workflow_handle(workflow_id).describe()
    except RPCError as error:
        assert error.status == RPCStatusCode.NOT_FOUND, error
        return False
    return True


async def message_workflows(stack: Stack) -> set[str]:
    """The ids of every MessageWorkflow started on this test's task queue (Temporal's visibility)."""
    query = f"WorkflowType = 'MessageWorkflow' AND TaskQueue = '{stack.settings.task_queue}'"
    return {execution.id async for execution in stack.temporal.list_workflows(query)}


async def settled_workflows(stack: Stack, must_include: Iterable[str]) -> set[str]:
    """The listing once it shows `must_include` (visibility lags a little behind the start)."""
    wanted = set(must_include)
    for _ in range(100):
        listed = await message_workflows(stack)
        if wanted <= listed:
            return listed
        await asyncio.sleep(0.1)
    raise AssertionError(f"never listed: {sorted(wanted - listed)}")


def disk(root: Path) -> set[str]:
    """Every path below root, and the entries beside it: symlinks are listed, never followed."""
    found = {str(root.parent / name) for name in os.listdir(root.parent)}
    for folder, dirs, files in os.walk(root, followlinks=False):
        found.update(os.path.join(folder, name) for name in dirs + files)
    return found
