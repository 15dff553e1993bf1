"""The service's data converter: what it writes is the SDK's own JSON, and it reads back what the SDK reads."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from temporalio.converter import DataConverter

from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import Environment
from isolator.contracts.message import (
    Conversation,
    IsolationHints,
    MessageInput,
    Resolution,
)
from isolator.payloads import DATA_CONVERTER

CODEBASE = Codebase(id="c1", name="project", canonical_path="/srv/project", default_branch="main", host="h1")


def _values() -> list[object]:
    environment = Environment(id="e1", codebase_id="c1", workflow_type="thread", workflow_id="t", working_path="/w/t",
                              branch_name="thread-1", status="active")
    return [
        Resolution(outcome="reused", working_path="/w/t", branch="thread-1", environment_id="e1", replies=["hi"]),
        MessageInput(platform="test", conversation_id="c", text="hello", message_key="k", default_host="h1"),
        MessageInput(platform="github", conversation_id="o/r#7", text="@isolator", message_key="k", default_host="h1",
                     hints=IsolationHints(workflow_type="pr", workflow_id="7", pr_is_fork=True, linked_issues=["4"])),
        Conversation(row_id="r1", platform="test", conversation_id="c", cwd=None, codebase=CODEBASE,
                     environment=environment, codebase_choices=["project"], attached_by="message:test:k"),
    ]


@pytest.mark.parametrize("value", _values(), ids=lambda value: type(value).__name__)
def test_it_writes_what_the_sdk_writes_and_reads_it_back_alike(value: object) -> None:
    ours, sdk = DATA_CONVERTER.payload_converter, DataConverter.default.payload_converter
    (payload,) = ours.to_payloads([value])
    assert payload == sdk.to_payloads([value])[0]
    assert ours.from_payloads([payload], [type(value)]) == sdk.from_payloads([payload], [type(value)]) == [value]


@dataclass
class _WithDerived:
    name: str
    size: int = 0
    tags: list[str] = field(default_factory=list)
    derived: str = field(init=False, default="")


def test_fields_outside_init_and_bad_values_are_handled_as_the_sdk_does() -> None:
    value = _WithDerived("x", 2, ["a"])
    value.derived = "kept"
    (payload,) = DATA_CONVERTER.payload_converter.to_payloads([value])
    assert DATA_CONVERTER.payload_converter.from_payloads([payload], [_WithDerived]) == [value]
    (wrong,) = DataConverter.default.payload_converter.to_payloads([{"name": "x", "size": "not a number"}])
    for converter in (DATA_CONVERTER, DataConverter.default):
        with pytest.raises(TypeError):
            converter.payload_converter.from_payloads([wrong], [_WithDerived])
