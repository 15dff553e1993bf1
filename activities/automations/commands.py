"""Chat's `/automation list|show|run|pause|resume` (docs/automations.md), for the people in the platform's
ADMIN_USERS, and the automations whose report place is a conversation, for its `/status`.

Pause, resume and run do what `POST /api/automations/{name}/pause`, `/resume` and `/run` do: the row and
its Temporal Schedule together, and a firing started as a person's (`run now`)."""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime
from typing import Any, Callable

import asyncpg
from temporalio import activity
from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError

from activities.automations import command_texts as texts
from activities.automations import schedules
from activities.automations.records import AutomationRecords, StoredAutomation
from isolator.automation_places import NoPlace, place_conversation
from isolator.contracts.automation import FiringInput, ReportPlace
from isolator.contracts.automation_commands import AutomationCommand, ReportPlaceQuery
from isolator.contracts.codebase import repository_full_name
from isolator.settings import Settings

NAMED = ("show", "run", "pause", "resume")


def admin_refusal(command: AutomationCommand, settings: Settings) -> str | None:
    """None when the sender may: a message without an allow rule (the test adapter), or one of its
    platform's ADMIN_USERS. An empty ADMIN_USERS allows no one: chat makes no automation run by default."""
    if command.platform == "automation":  # a firing's own prompt is never taken as a command
        return "An automation's firing cannot run `/automation` commands."
    if not command.admitted:
        return None
    admins: frozenset[str] | None = getattr(settings, f"{command.platform}_admin_users", None)
    variable = f"{command.platform.upper()}_ADMIN_USERS"
    if admins is None:
        return f"`/automation` commands are not taken from {command.platform}."
    if command.user is not None and command.user in admins:
        return None
    who = f"your {'login' if command.platform == 'github' else 'user id'} `{command.user}`"
    return (f"Only the people in `{variable}` may run `/automation` commands"
            + (", and it names no one" if not admins else "") + f". To allow you, add {who} to it.")


def same_place(place_conversation_id: str, conversation_id: str) -> bool:
    """The report place's conversation, or a thread of it (Slack's place is its channel, `C0123:`); the
    query of the firings' places says the same in SQL."""
    return conversation_id == place_conversation_id or (
        place_conversation_id.endswith(":") and conversation_id.startswith(place_conversation_id))


class AutomationCommandActivities:
    def __init__(self, settings: Settings, pool: asyncpg.Pool, client: Client) -> None:
        self.settings = settings
        self.pool = pool
        self.client = client
        self.records = AutomationRecords(pool)

    def chat_steps(self) -> list[Callable[..., Any]]:
        """Local activities of the message workflow: its `/automation …` and its `/status`."""
        return [self.automation_command, self.automations_reporting_here]

    @activity.defn
    async def automation_command(self, command: AutomationCommand) -> str:
        if (refusal := admin_refusal(command, self.settings)) is not None:
            return refusal
        subcommand = command.args[0].lower() if command.args else ""
        if subcommand == "list" and len(command.args) == 1:
            return await self._list()
        if subcommand not in NAMED or len(command.args) != 2:
            return texts.USAGE
        name = command.args[1].lower()
        stored = await self.records.get(name)
        if stored is None:
            return texts.no_such(command.args[1], [each.automation.name for each in await self.records.all()])
        if subcommand == "show":
            return await self._show(stored)
        if subcommand == "run":
            return await self._run(stored, command)
        return await self._pause(stored, subcommand == "pause", command.sender)

    @activity.defn
    async def automations_reporting_here(self, query: ReportPlaceQuery) -> list[str]:
        """By the places their firings reported to, and by their definitions' places (a firing of
        `github:origin` reports to the issue its event came from, which only its firing knows)."""
        names = {row["automation"] for row in await self.pool.fetch(
            """SELECT DISTINCT f.automation FROM automation_firings f JOIN automations a ON a.name = f.automation
               WHERE f.report_platform = $1 AND (f.report_conversation = $2
                  OR (right(f.report_conversation, 1) = ':' AND starts_with($2, f.report_conversation)))""",
            query.platform, query.conversation_id)}
        rows = await self.pool.fetch(  # only the report place of each definition: a small read
            """SELECT a.name, a.definition->'report' AS report, c.repository_url FROM automations a
               JOIN codebases c ON c.id = a.codebase_id WHERE a.definition->'report'->>'platform' = $1""",
            query.platform)
        for row in rows:
            try:
                place = place_conversation(ReportPlace(**row["report"]), repository_full_name(row["repository_url"]),
                                           None)
            except NoPlace:
                continue
            if same_place(place.conversation_id, query.conversation_id):
                names.add(row["name"])
        return sorted(names)

    async def _list(self) -> str:
        rows = []
        for stored in await self.records.all():
            last = await self.records.firings(stored.automation.name, 1)
            rows.append((stored, await self._codebase(stored), await self._next_firing(stored),
                         last[0] if last else None))
        return texts.listed(rows)

    async def _show(self, stored: StoredAutomation) -> str:
        name = stored.automation.name
        return texts.shown(stored, await self._codebase(stored), await self._next_firing(stored),
                           await self.records.spent_today(name), list(await self.records.firings(name, 5)))

    async def _run(self, stored: StoredAutomation, command: AutomationCommand) -> str:
        name = stored.automation.name
        if self.settings.automations == "off":
            return "Automations are switched off on this service (`AUTOMATIONS=off`): a firing would run nothing."
        if stored.paused:
            return texts.run_refused(name, stored.paused_reason)
        # Named by the message, so that a retried step starts the one firing it started.
        key = hashlib.sha256(command.message_workflow_id.encode()).hexdigest()[:12] \
            if command.message_workflow_id else uuid.uuid4().hex[:12]
        try:
            await self.client.start_workflow(
                schedules.FIRING_WORKFLOW, FiringInput(name, trigger="run now"), id=f"automation:{name}:chat-{key}",
                task_queue=self.settings.task_queue, static_summary=f"automation {name}, by run now from chat",
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE)
        except WorkflowAlreadyStartedError:  # this step, retried: its firing goes on, or has ended
            pass
        return texts.started(name, stored.automation.report.spelled())

    async def _pause(self, stored: StoredAutomation, pause: bool, sender: str) -> str:
        name = stored.automation.name
        if stored.paused == pause:
            return texts.paused(name, True, stored.paused_reason) if pause else texts.resumed(name, False, None)
        note = f"{'paused' if pause else 'resumed'} from chat by {sender or 'an admin'}"
        await self.records.set_paused(name, pause, note)
        await schedules.pause_schedule(self.client, name, pause, note)
        if pause:
            return texts.paused(name, False, note)
        return texts.resumed(name, True, await self._next_firing((await self.records.get(name)) or stored))

    async def _codebase(self, stored: StoredAutomation) -> str | None:
        return await self.pool.fetchval("SELECT name FROM codebases WHERE id = $1::uuid", stored.codebase_id)

    async def _next_firing(self, stored: StoredAutomation) -> datetime | None:
        if stored.automation.schedule is None or stored.paused:
            return None
        try:
            described = await self.client.get_schedule_handle(schedules.schedule_id(stored.automation.name)).describe()
        except RPCError:
            return None
        upcoming = described.info.next_action_times
        return upcoming[0] if upcoming else None
