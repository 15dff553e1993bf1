"""The documentation says what the code does: every setting, search attribute and limit it names is the
code's own, and the README stays a short front door."""

from __future__ import annotations

import re
from pathlib import Path

from api.test_adapter import InboundTestMessage
from api.platforms.limits import MAX_WEBHOOK_BODY
from isolator.contracts import search_attributes
from isolator.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
OPERATIONS = ROOT / "docs" / "operations.md"
PLATFORMS = ROOT / "docs" / "platforms.md"
API = ROOT / "docs" / "api.md"


def _configuration_table() -> str:
    text = OPERATIONS.read_text()
    return text[text.index("## Configuration"):]


def test_every_environment_variable_of_the_settings_is_in_the_configuration_table() -> None:
    variables = {field.validation_alias.choices[0] for field in Settings.model_fields.values()}  # type: ignore[union-attr]
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", _configuration_table()))
    assert variables - documented == set(), "add these to docs/operations.md, Configuration"


def test_every_search_attribute_is_named_where_the_temporal_ui_is_explained() -> None:
    text = OPERATIONS.read_text()
    assert [key.name for key in search_attributes.ALL if f"`{key.name}`" not in text] == []


def test_the_message_limits_documented_are_the_code_s() -> None:
    limit = next(m.max_length for m in InboundTestMessage.model_fields["message"].metadata if hasattr(m, "max_length"))
    assert (limit, MAX_WEBHOOK_BODY) == (65536, 1024 * 1024)
    for page in (README, PLATFORMS, API):
        assert "65,536 characters" in page.read_text(), page.name
    assert "1 MiB" in PLATFORMS.read_text()


def test_the_readme_is_a_front_door() -> None:
    assert len(README.read_text().splitlines()) <= 250
