"""What chat's `/automation …` commands and `/status` say of automations (pure: stored rows in, text out)."""

from __future__ import annotations

from datetime import datetime, timezone

import asyncpg

from activities.automations.records import StoredAutomation

USAGE = ("`/automation list`: the automations; `/automation show <name>`: one, with its last firings; "
         "`/automation run <name>`: fire it now; `/automation pause <name>`, `/automation resume <name>`: "
         "stop and start its firings (for the people in the platform's `ADMIN_USERS`)")
NONE_YET = ("No automations yet: a repository defines them in `[[automations]]` of its `.isolator.toml` on the "
            "default branch, the operator with `POST /api/automations`.")
LIST_AT_MOST = 30
PROMPT_SHOWN = 300


def when(moment: datetime | None) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if moment else ""


def fires(stored: StoredAutomation, next_firing: datetime | None) -> str:
    automation, parts = stored.automation, []
    if automation.schedule is not None:
        timing = f"`{automation.schedule.spelled()}` ({automation.schedule.timezone})"
        parts.append(f"{timing}, next at {when(next_firing)}" if next_firing else timing)
    if automation.triggers:
        parts.append("on " + ", ".join(f"`{trigger.spelled()}`" for trigger in automation.triggers))
    return "; ".join(parts)


def state(stored: StoredAutomation) -> str:
    if stored.paused:
        return f"paused ({stored.paused_reason or 'by a person'})"
    return "active" + (f", {stored.failures_in_a_row} failed in a row" if stored.failures_in_a_row else "")


def firing_line(firing: asyncpg.Record) -> str:
    parts = [f"{when(firing['started_at'])}, by {firing['trigger']}: {firing['state'] or 'running'}"]
    if firing["run_id"]:
        parts.append(f"run `{firing['run_id']}`")
    if firing["cost_usd"]:
        parts.append(f"${float(firing['cost_usd']):.2f}")
    if firing["pull_request_url"]:
        parts.append(f"PR {firing['pull_request_url']}")
    return ", ".join(parts)


def listed(rows: list[tuple[StoredAutomation, str | None, datetime | None, asyncpg.Record | None]]) -> str:
    """Each automation: (stored, its codebase's name, its next firing, its last firing)."""
    if not rows:
        return NONE_YET
    lines = [f"Automations ({len(rows)}):"]
    for stored, codebase, next_firing, last in rows[:LIST_AT_MOST]:
        line = f"`{stored.automation.name}` ({codebase}): {fires(stored, next_firing)}; reports to " \
               f"`{stored.automation.report.spelled()}`; {state(stored)}"
        lines.append(line + (f"; last firing {firing_line(last)}" if last is not None else ""))
    if len(rows) > LIST_AT_MOST:
        lines.append(f"… and {len(rows) - LIST_AT_MOST} more (`GET /api/automations`, or the dashboard).")
    lines.append("`/automation show <name>` shows one with its last firings.")
    return "\n".join(lines)


def shown(stored: StoredAutomation, codebase: str | None, next_firing: datetime | None, spent: float,
          firings: list[asyncpg.Record]) -> str:
    automation = stored.automation
    prompt = " ".join(automation.prompt.split())
    limits = [f"${automation.max_cost_usd:g} a firing" if automation.max_cost_usd is not None else "",
              f"${automation.daily_budget_usd:g} a day" if automation.daily_budget_usd is not None else ""]
    lines = [
        f"Automation `{automation.name}` of `{codebase}`, defined "
        + ("in its repository's `.isolator.toml`" if automation.origin == "repository" else "through the API"),
        f"Fires: {fires(stored, next_firing)}",
        f"Prompt: {prompt[:PROMPT_SHOWN]}{'…' if len(prompt) > PROMPT_SHOWN else ''}",
        f"Reports to `{automation.report.spelled()}`; results: {automation.results}; memory: {automation.memory}"
        + ("; quiet" if automation.quiet else ""),
        f"Spent today: ${spent:.2f}" + (f" (limits: {', '.join(limit for limit in limits if limit)})"
                                         if any(limits) else ""),
        f"State: {state(stored)}",
    ]
    lines.append("Last firings:" if firings else "No firing yet.")
    lines.extend(f"- {firing_line(firing)}" for firing in firings)
    return "\n".join(lines)


def no_such(name: str, names: list[str]) -> str:
    known = ", ".join(f"`{each}`" for each in names[:20])
    name = name.replace("`", "")[:64]  # the sender's words, quoted: no code span of theirs, no page of it
    return f"There is no automation `{name}`" + (f": there are {known}." if known else ", and none yet.")


def paused(name: str, already: bool, reason: str) -> str:
    if already:
        return f"`{name}` is paused already ({reason or 'by a person'})."
    return (f"Paused `{name}`: its schedule fires no more and its events start nothing, until "
            f"`/automation resume {name}`.")


def resumed(name: str, was_paused: bool, next_firing: datetime | None) -> str:
    if not was_paused:
        return f"`{name}` is not paused."
    return f"Resumed `{name}`: " + (f"its next firing is at {when(next_firing)}." if next_firing
                                    else "it fires again on its events.")


def run_refused(name: str, reason: str) -> str:
    return f"`{name}` is paused ({reason or 'by a person'}): `/automation resume {name}` first."


def started(name: str, place: str) -> str:
    return f"Started a firing of `{name}` now: it reports to `{place}`."

