"""Reading an automation's definition, from `[[automations]]` in `.isolator.toml` or from the API.

Pure: a table in, an Automation or an AutomationProblem out, so that a push, an API call and a chat
command say the same thing about the same mistake.
"""

from __future__ import annotations

import re
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from isolator.contracts.automation import (
    Automation,
    AutomationProblem,
    EventTrigger,
    Origin,
    ReportPlace,
    Schedule,
)

NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
MAX_PROMPT = 16384
MAX_AUTOMATIONS = 100  # per repository file
_DURATION = re.compile(r"^(\d{1,6})\s*([smhd])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# Five fields of cron (minute hour day month weekday), each of digits, `*`, `,`, `-`, `/` or a name.
_CRON_FIELD = re.compile(r"^[0-9A-Za-z*,/?-]+$")
_KEYS: dict[str, type | tuple[type, ...]] = {
    "name": str, "schedule": str, "timezone": str, "on": list, "prompt": str, "report": str,
    "results": str, "memory": str, "quiet": bool, "max_cost_usd": (int, float),
    "daily_budget_usd": (int, float), "owners": list, "catchup": str, "jitter": str, "overlap": str,
    "codebase": str,
}
# The events an automation may name, per platform, and what its argument means.
EVENTS: dict[str, dict[str, str]] = {
    "github": {
        "issues.opened": "", "issues.labeled": "the label", "pull_request.opened": "",
        "pull_request.ready_for_review": "", "push": "the branch", "check_suite.failed": "the branch",
        "workflow_run.failed": "the branch", "release.published": "",
    },
    "slack": {"message": "the channel, `#name` or its id; then `:` and a regular expression the text matches"},
    "webhook": {"call": ""},
}
REPORT_PLATFORMS = ("slack", "telegram", "discord", "github", "test")


class _Invalid(Exception):
    def __init__(self, key: str | None, reason: str) -> None:
        super().__init__(reason)
        self.key, self.reason = key, reason


def read_automations(tables: Any, origin: Origin = "repository") -> list[Automation] | AutomationProblem:
    """`[[automations]]` as tomllib gives it (a list of tables): every one, or the first problem."""
    if not isinstance(tables, list) or not all(isinstance(table, dict) for table in tables):
        return AutomationProblem(None, None, "must be tables, each `[[automations]]`")
    if len(tables) > MAX_AUTOMATIONS:
        return AutomationProblem(None, None, f"at most {MAX_AUTOMATIONS} automations in one file")
    automations: list[Automation] = []
    for table in tables:
        read = read_automation(table, origin)
        if isinstance(read, AutomationProblem):
            return read
        if any(other.name == read.name for other in automations):
            return AutomationProblem(read.name, "name", "two automations have this name")
        automations.append(read)
    return automations


def read_automation(table: dict[str, Any], origin: Origin) -> Automation | AutomationProblem:
    name = table.get("name")
    try:
        return _automation(table, origin)
    except _Invalid as invalid:
        return AutomationProblem(name if isinstance(name, str) and NAME.match(name) else None,
                                 invalid.key, invalid.reason)


def _automation(table: dict[str, Any], origin: Origin) -> Automation:
    for key, value in table.items():
        expected = _KEYS.get(key)
        if expected is None:
            raise _Invalid(key, f"unknown key (known: {', '.join(_KEYS)})")
        if not isinstance(value, expected) or (expected is not bool and isinstance(value, bool)):
            raise _Invalid(key, "has the wrong kind of value")
    name = table.get("name", "")
    if not NAME.match(name):
        raise _Invalid("name", "needs a name of lowercase letters, digits and `-` (at most 63)")
    prompt = table.get("prompt", "")
    if not prompt.strip() or len(prompt) > MAX_PROMPT or "\x00" in prompt:
        raise _Invalid("prompt", f"needs a prompt (at most {MAX_PROMPT} characters)")
    schedule = _schedule(table) if "schedule" in table else None
    triggers = tuple(_trigger(spelled) for spelled in table.get("on", []))
    if schedule is None and not triggers:
        raise _Invalid(None, "needs a `schedule` or `on` events (or both)")
    if "codebase" in table and origin == "repository":
        raise _Invalid("codebase", "a repository's automation is its own codebase's: leave `codebase` out")
    results = table.get("results", "report")
    if results not in ("pr", "report"):
        raise _Invalid("results", "must be `pr` or `report`")
    memory = table.get("memory", "fresh")
    if memory not in ("fresh", "keep"):
        raise _Invalid("memory", "must be `fresh` or `keep`")
    return Automation(
        name=name, prompt=prompt, report=_report(table.get("report"), triggers), origin=origin,
        codebase_id=table.get("codebase"), schedule=schedule, triggers=triggers, results=results,
        memory=memory, quiet=table.get("quiet", False), max_cost_usd=_money(table, "max_cost_usd"),
        daily_budget_usd=_money(table, "daily_budget_usd"), owners=_owners(table.get("owners", [])),
    )


def _schedule(table: dict[str, Any]) -> Schedule:
    spelled = table["schedule"].strip()
    timezone = table.get("timezone", "UTC")
    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise _Invalid("timezone", f"`{timezone}` is no time zone (like `Europe/Berlin` or `UTC`)") from None
    overlap = table.get("overlap", "skip")
    if overlap not in ("skip", "buffer_one", "allow_all"):
        raise _Invalid("overlap", "must be `skip`, `buffer_one` or `allow_all`")
    common = dict(timezone=timezone, catchup_seconds=duration_seconds(table.get("catchup", "1h"), "catchup"),
                  jitter_seconds=duration_seconds(table.get("jitter", "0s"), "jitter"), overlap=overlap)
    if spelled.startswith("@every"):
        every = duration_seconds(spelled.removeprefix("@every").strip(), "schedule")
        if every < 5:
            raise _Invalid("schedule", "`@every` needs at least 5s")
        return Schedule(every_seconds=every, **common)  # type: ignore[arg-type]
    fields = spelled.split()
    if len(fields) != 5 or not all(_CRON_FIELD.match(part) for part in fields):
        raise _Invalid("schedule", "must be cron's five fields (`0 7 * * 1`: 7:00 on Mondays) or `@every 6h`")
    return Schedule(cron=" ".join(fields), **common)  # type: ignore[arg-type]


def duration_seconds(spelled: str, key: str) -> int:
    found = _DURATION.match(spelled.strip())
    if not found:
        raise _Invalid(key, f"`{spelled}` is no duration (like `90s`, `30m`, `6h`, `1d`)")
    return int(found.group(1)) * _UNIT_SECONDS[found.group(2)]


def _trigger(spelled: Any) -> EventTrigger:
    if not isinstance(spelled, str):
        raise _Invalid("on", "must be a list of events, like `github:issues.labeled:agent`")
    platform, _, rest = spelled.partition(":")
    event, _, argument = rest.partition(":")
    known = EVENTS.get(platform)
    if known is None or event not in known:
        choices = ", ".join(f"{name}:{kind}" for name, kinds in EVENTS.items() for kind in kinds)
        raise _Invalid("on", f"`{spelled}` is no event this service knows ({choices})")
    if platform == "slack":
        channel, _, pattern = argument.partition(":")
        if not channel:
            raise _Invalid("on", f"`{spelled}` needs its channel: `slack:message:#alerts`")
        if pattern:
            try:
                re.compile(pattern)
            except re.error as error:
                raise _Invalid("on", f"`{spelled}`: the pattern is not a regular expression ({error})") from None
    return EventTrigger(platform, event, argument)  # type: ignore[arg-type]


def _report(spelled: Any, triggers: tuple[EventTrigger, ...]) -> ReportPlace:
    if not isinstance(spelled, str) or ":" not in spelled:
        raise _Invalid("report", "needs where to report: `slack:#eng-bots`, `telegram:<chat id>`, "
                                 "`discord:<channel id>`, `github:issue:<n>` or `github:origin`")
    platform, _, place = spelled.partition(":")
    if platform not in REPORT_PLATFORMS or not place.strip() or any(c.isspace() for c in place):
        raise _Invalid("report", f"`{spelled}` is no place to report ({', '.join(REPORT_PLATFORMS)})")
    if platform == "github" and place != "origin" and not re.fullmatch(r"issue:[1-9][0-9]{0,9}", place):
        raise _Invalid("report", "on GitHub: `github:issue:<number>` or `github:origin`")
    if place == "origin" and not any(trigger.platform == "github" for trigger in triggers):
        raise _Invalid("report", "`github:origin` needs a GitHub event in `on` to come from")
    return ReportPlace(platform, place)


def _money(table: dict[str, Any], key: str) -> float | None:
    value = table.get(key)
    if value is not None and not 0 < value <= 10000:
        raise _Invalid(key, "must be more than 0 and at most 10000 (USD)")
    return float(value) if value is not None else None


def _owners(values: list[Any]) -> tuple[str, ...]:
    if not all(isinstance(value, str) and re.fullmatch(r"[a-z]+:[^\s:]{1,100}", value) for value in values):
        raise _Invalid("owners", "must be a list of `platform:user`, like `slack:U0123` or `github:octocat`")
    return tuple(values)
